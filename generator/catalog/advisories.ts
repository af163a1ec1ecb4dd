/**
 * Package versions nixpkgs marks insecure (`meta.knownVulnerabilities`): evaluation refuses such a package unless
 * nixpkgs' `config.permittedInsecurePackages` lists its name ("python3.13-vllm-0.16.0"). This project never adds that
 * permission itself; `insecureNote` says what a variant's pin does, for explain (the variant's notes) and detect.
 *
 * vLLM: CVE-2026-27893 (NVD: vLLM from 0.10.1 and before 0.18.0 hardcodes `trust_remote_code=True` in two model files;
 * read in NVD's summary as quoted by stored records), CVE-2026-44222 and CVE-2026-44223 (fixed in 0.20.0 as the issue
 * that asked for this table says; not read at NVD here). nixpkgs marked its vLLM insecure on master with
 * NixOS/nixpkgs#523800 "python3Packages.vllm: mark insecure" (opened 2026-05-24, merged after a comment of 2026-05-27;
 * read in the PR thread), and #541174 (2026-07-12) added more; NixOS 26.05 branched off on 2026-05-24
 * (nix-community/home-manager#9294, pointing to NixOS/nixpkgs#503391), and no backport of #523800 to release-26.05 was
 * found. A third party's configuration on nixpkgs-unstable says "vllm 0.16.0 is marked insecure … Drop this allow once
 * unstable ships vllm >= 0.20.0". That nixos-cuda dropped vllm from its channel blockers for this reason is the
 * issue's word, not read here.
 */
import type { KnownVulnerable } from "./schema.ts";

export const KNOWN_VULNERABLE: KnownVulnerable[] = [
  {
    package: "vllm",
    below: "0.20.0",
    advisories: [
      "CVE-2026-27893 (trust_remote_code bypass, vLLM 0.10.1 up to 0.18.0; NVD summary read as quoted)",
      "CVE-2026-44222 and CVE-2026-44223 (fixed in 0.20.0; not read at NVD here)",
    ],
    markedBy: { pr: "NixOS/nixpkgs#523800", branch: "master", after: "2026-05-24" },
    pins: {
      "0182a361324364ae3f436a63005877674cf45efb": {
        marks: "no",
        why: "inferred from dates: this revision (2026-02-17) predates NixOS/nixpkgs#523800 (opened 2026-05-24); its file was not read",
      },
      "549bd84d6279f9852cae6225e372cc67fb91a4c1": {
        marks: "no",
        why: "inferred from dates: this revision (2026-05-05) predates NixOS/nixpkgs#523800 (opened 2026-05-24); its file was not read",
      },
      a3116115851d68b8952a2a4221cc25a84e56b532: {
        marks: "unknown",
        why:
          "nixos-26.05 branched off on 2026-05-24 and NixOS/nixpkgs#523800 reached master after it; no backport to " +
          "release-26.05 was found and the file at this revision was not read",
      },
    },
    source:
      "NixOS/nixpkgs#523800 (2026-05-24: 'python3Packages.vllm: mark insecure'); NixOS/nixpkgs#541174 (2026-07-12: 'add " +
      "more known vulnerabilities'); nix-community/home-manager#9294 (2026-05-24: 'NixOS 26.05 has just been branched " +
      "off'); NVD CVE-2026-27893 as quoted by stored records",
  },
];
