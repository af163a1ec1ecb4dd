// Types of sources-hash.mjs (plain JavaScript: the launcher runs it before anything is compiled).

/** The files a bundle is built from, below the repository root: generator/**, package-lock.json, bin/build-dist.mjs (absolute paths, in hashing order). */
export function sourceFiles(root: string): string[];

/** The first 16 hex digits of a SHA-256 over each file's root-relative path and content (default files: sourceFiles(root)). */
export function sourcesHash(root: string, files?: string[]): string;

/** The <hash> of the bundle dist/<hash>/ that `moduleUrl` (default: this module) lies in, or null outside such a bundle. */
export function bundleIdentity(moduleUrl?: string): string | null;
