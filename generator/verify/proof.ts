/**
 * A variant's proof as `verify` reads it: the output of its static check (release.nix `tests.NAME.static`,
 * pkgs/checks.nix), a directory or store path holding `probe.json` (probe.py --cuobjdump, run in the sandbox) and
 * `report.txt` (the comparison's lines). Given one, verify runs on the GPU only what needs it (the probe without
 * --cuobjdump) and takes the device code from the proof's probe, but only when the proof is about the very libraries
 * the live probe found: the same files, matched by resolved path (a store path names one build) and size. Anything
 * else (no such directory, no probe.json, a probe without device code or without the libraries' resolved paths, other
 * libraries) is a reason to set the proof aside, which verify says, reading the device code itself as without one.
 * Pure but for readProof, which reads the proof's two files.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { Probe } from "./compare.ts";

/** A proof that could be read: where it is, its probe (with device code), and the last line of its report.txt. */
export interface Proof {
  /** The directory (store path) given. */
  path: string;
  probe: Probe;
  /** The last line of report.txt ("NAME: every promise holds"), null when the proof has no report.txt. */
  summary: string | null;
}

/** readProof's answer: the proof, or why it cannot be used (said in verify's report). */
export type ProofRead = { ok: true; proof: Proof } | { ok: false; path: string; reason: string };

/** What a proof is, for the reasons that name it. */
const WHAT = "a proof is the output of release.nix tests.NAME.static: probe.json and report.txt";

/**
 * Why `path` cannot be a proof at all (it does not exist, or is not a directory), or null. A path the user typed that
 * is no proof is bad input (verify planVerify refuses it, exit 2); what readProof sets aside is a proof it cannot use.
 */
export function notAProof(path: string): string | null {
  if (!existsSync(path)) return `${path} does not exist (${WHAT})`;
  if (!statSync(path).isDirectory()) return `${path} is not a directory (${WHAT})`;
  return null;
}

/**
 * Read the proof at `path` (a directory holding probe.json and, usually, report.txt). Never throws: a proof that
 * cannot be read is set aside with the reason, so that verify goes on as without one.
 */
export function readProof(path: string): ProofRead {
  const no = (reason: string): ProofRead => ({ ok: false, path, reason });
  const none = notAProof(path);
  if (none) return no(none);
  const file = join(path, "probe.json");
  if (!existsSync(file)) return no(`${path} holds no probe.json (${WHAT})`);
  let probe: Probe;
  try {
    probe = JSON.parse(readFileSync(file, "utf8")) as Probe;
  } catch (e) {
    return no(`${file} cannot be read: ${(e as Error).message}`);
  }
  if (probe === null || typeof probe !== "object" || probe.probe !== 1) return no(`${file} is not a probe's output`);
  const c = probe.cuobjdump;
  if (!c || !c.tool || c.error) return no(`its probe read no device code (${c?.error ?? "it ran without --cuobjdump"})`);
  if (!probe.libraries) return no("its probe.json names no library's resolved path (made by a probe before proofs): which files it read cannot be told");
  const missing = Object.keys(probe.libraries).filter((l) => !c.libs[l]);
  if (missing.length) return no(`its probe lists ${missing.length} library(ies) without their device code (e.g. ${missing[0]})`);
  let summary: string | null = null;
  try {
    summary = readFileSync(join(path, "report.txt"), "utf8").trim().split("\n").pop() ?? null;
  } catch {
    /* a proof without its report still holds the probe; the summary is then unknown */
  }
  return { ok: true, proof: { path, probe, summary } };
}

/** A library as a file: its resolved path and its name in the library directory (two names of one file stay two). */
const identity = (path: string, l: { real: string; bytes: number }) => `${l.real}\0${basename(path)}\0${l.bytes}`;

/** Up to `n` items of `xs`, and how many more. */
const some = (xs: string[], n = 2) => `${xs.slice(0, n).join(", ")}${xs.length > n ? ` and ${xs.length - n} more` : ""}`;

/**
 * The live probe (run without --cuobjdump) with the proof's device code, each entry under the live path of the same
 * file; or why the proof is about other libraries (a library here it does not hold, one of it not here, by resolved
 * path and size). Pure.
 */
export function withProofDeviceCode(live: Probe, proof: Proof): { ok: true; probe: Probe } | { ok: false; reason: string } {
  const here = live.libraries;
  const its = proof.probe.libraries!;
  if (!here) return { ok: false, reason: "the probe here listed no libraries (torch did not import)" };
  const byIdentity = new Map(Object.entries(here).map(([p, l]) => [identity(p, l), p]));
  const proofIds = new Map(Object.entries(its).map(([p, l]) => [identity(p, l), p]));
  const notInProof = [...byIdentity].filter(([id]) => !proofIds.has(id)).map(([, p]) => here[p]!.real);
  const notHere = [...proofIds].filter(([id]) => !byIdentity.has(id)).map(([, p]) => its[p]!.real);
  if (notInProof.length || notHere.length) {
    const parts = [
      ...(notInProof.length ? [`${notInProof.length} of the ${byIdentity.size} libraries here are not in it (${some(notInProof)})`] : []),
      ...(notHere.length ? [`${notHere.length} of its ${proofIds.size} are not here (${some(notHere)})`] : []),
    ];
    return { ok: false, reason: `it is about other libraries: ${parts.join("; ")}` };
  }
  const c = proof.probe.cuobjdump!;
  const libs: NonNullable<Probe["cuobjdump"]>["libs"] = {};
  for (const [p, l] of Object.entries(here)) libs[p] = c.libs[proofIds.get(identity(p, l))!]!;
  return { ok: true, probe: { ...live, cuobjdump: { tool: c.tool, error: null, libs } } };
}
