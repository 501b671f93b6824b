// What machine an executable is built for, read from its header: ELF e_machine (System V ABI, offset 18), Mach-O
// cputype (mach/machine.h, after the 0xfeedfacf magic) and PE Machine (the COFF header after `PE\0\0`, found at
// e_lfanew, offset 0x3c of the MZ header). Pure: a function of the file's first bytes. scripts/package checks every
// artifact with it before archiving, and tests/integration/package.test.ts checks the archives again.

/** @typedef {{ format: 'elf' | 'macho' | 'pe', arch: 'x64' | 'arm64' | string }} Header */

const ELF_MACHINES = { 0x3e: 'x64', 0xb7: 'arm64' };
const MACHO_CPUS = { 0x01000007: 'x64', 0x0100000c: 'arm64' };
const PE_MACHINES = { 0x8664: 'x64', 0xaa64: 'arm64' };

/**
 * The format and architecture of an executable or shared object from its first 4 KiB (enough for every header
 * above); null when it is none of the three. An unknown machine is reported by its number.
 * @param {Uint8Array} bytes
 * @returns {Header | null}
 */
export function readHeader(bytes) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 20 && b.readUInt32BE(0) === 0x7f454c46) {
    // EI_DATA (offset 5): 1 little-endian, 2 big-endian.
    const m = b[5] === 2 ? b.readUInt16BE(18) : b.readUInt16LE(18);
    return { format: 'elf', arch: ELF_MACHINES[m] ?? `elf-machine-${m}` };
  }
  if (b.length >= 8 && b.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = b.readUInt32LE(4);
    return { format: 'macho', arch: MACHO_CPUS[cpu] ?? `macho-cpu-${cpu.toString(16)}` };
  }
  if (b.length >= 0x40 && b.toString('latin1', 0, 2) === 'MZ') {
    const pe = b.readUInt32LE(0x3c);
    if (pe + 6 <= b.length && b.toString('latin1', pe, pe + 4) === 'PE\0\0') {
      const m = b.readUInt16LE(pe + 4);
      return { format: 'pe', arch: PE_MACHINES[m] ?? `pe-machine-${m.toString(16)}` };
    }
  }
  return null;
}

const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;

/**
 * A 64-bit Mach-O's segment names and whether it carries a code signature (LC_CODE_SIGNATURE), from its load commands
 * (mach-o/loader.h), which follow the 32-byte header; null when `bytes` is not one or is cut short of its commands.
 * @param {Uint8Array} bytes the file's first bytes (32 + sizeofcmds: 4 KiB is plenty for node)
 * @returns {{ segments: string[], signed: boolean } | null}
 */
export function machoLoadCommands(bytes) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 32 || b.readUInt32LE(0) !== 0xfeedfacf) return null;
  const ncmds = b.readUInt32LE(16);
  const segments = [];
  let signed = false;
  for (let i = 0, off = 32; i < ncmds; i++) {
    if (off + 8 > b.length) return null;
    const cmd = b.readUInt32LE(off);
    const size = b.readUInt32LE(off + 4);
    if (cmd === LC_SEGMENT_64) segments.push(b.toString('latin1', off + 8, off + 24).replace(/\0+$/, ''));
    if (cmd === LC_CODE_SIGNATURE) signed = true;
    if (size < 8) return null;
    off += size;
  }
  return { segments, signed };
}

/** The header each platform's executables must have. @type {Record<string, Header>} */
export const EXPECTED = {
  'linux-x64': { format: 'elf', arch: 'x64' },
  'linux-arm64': { format: 'elf', arch: 'arm64' },
  'darwin-x64': { format: 'macho', arch: 'x64' },
  'darwin-arm64': { format: 'macho', arch: 'arm64' },
  'win-x64': { format: 'pe', arch: 'x64' },
};

/**
 * Null when `bytes` is an executable for `target`, else why not.
 * @param {string} target one of EXPECTED's keys
 * @param {Uint8Array} bytes the file's first 4 KiB or more
 */
export function wrongArch(target, bytes) {
  const want = EXPECTED[target];
  const got = readHeader(bytes);
  if (!want) return `unknown target ${target}`;
  if (!got) return 'not an ELF, Mach-O or PE file';
  return got.format === want.format && got.arch === want.arch ? null : `${got.format}/${got.arch}, expected ${want.format}/${want.arch}`;
}
