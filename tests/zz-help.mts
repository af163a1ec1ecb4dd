import { main } from "../generator/cli.ts";
const io = { out: () => {}, err: () => {}, columns: 400, isTTY: false };
const cmds = [["list", "--json"], ["explain", "pytorch-python313-cuda12_8-sm90-avx512"], ["build", "--dry-run", "--json", "pytorch-python313-cpu-avx2"], ["install", "--dry-run", "pytorch-python313-cpu-avx2", "--cpuinfo", "tests/fixtures/hosts/x/cpuinfo"], ["detect", "--json"]];
for (const a of cmds) await main(a, io);
for (const a of cmds) {
  const r: Record<string, number[]> = { on: [], off: [] };
  for (let i = 0; i < 16; i++) for (const m of ["on", "off"]) {
    if (m === "off") process.env.NOCACHEHELP = "1"; else delete process.env.NOCACHEHELP;
    const c = process.cpuUsage(); await main(a, io); const d = process.cpuUsage(c); r[m].push((d.user + d.system) / 1000);
  }
  const med = (x: number[]) => x.sort((p, q) => p - q)[x.length >> 1];
  console.log(a[0], "cpu ms median: with cached help", med(r.on).toFixed(1), "without", med(r.off).toFixed(1));
}
