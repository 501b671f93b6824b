// Types of arch.mjs (a plain module, so scripts/package runs on node without a build).
/** An executable's format and machine. */
export interface Header {
  format: 'elf' | 'macho' | 'pe';
  arch: string;
}
/** The format and architecture of an executable or shared object from its first 4 KiB; null when none of the three. */
export function readHeader(bytes: Uint8Array): Header | null;
/** The header each platform's executables must have. */
export const EXPECTED: Record<string, Header>;
/** Null when `bytes` is an executable for `target`, else why not. */
export function wrongArch(target: string, bytes: Uint8Array): string | null;
/** A 64-bit Mach-O's segment names and whether it carries a code signature; null when not one. */
export function machoLoadCommands(bytes: Uint8Array): { segments: string[]; signed: boolean } | null;
