// scripts/packaging/arch.mjs, the header check scripts/package runs on every artifact: a table of synthetic headers
// (ELF, Mach-O, PE for both machines, and files that are none of them), and Mach-O load commands read back.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { machoLoadCommands, readHeader, wrongArch } from '../scripts/packaging/arch.mjs';

/** An ELF header: class 64, `data` 1 (little-endian) or 2 (big-endian), e_machine at 18. */
function elf(machine: number, data = 1): Buffer {
  const b = Buffer.alloc(64);
  b.write('\x7fELF', 0, 'latin1');
  b[4] = 2;
  b[5] = data;
  if (data === 2) b.writeUInt16BE(machine, 18);
  else b.writeUInt16LE(machine, 18);
  return b;
}

/** A 64-bit Mach-O header with `commands` ([cmd, payload]) after it. */
function macho(cpu: number, commands: Array<[number, Buffer]> = []): Buffer {
  const cmds = commands.map(([cmd, payload]) => {
    const c = Buffer.alloc(8 + payload.length);
    c.writeUInt32LE(cmd, 0);
    c.writeUInt32LE(c.length, 4);
    payload.copy(c, 8);
    return c;
  });
  const h = Buffer.alloc(32);
  h.writeUInt32LE(0xfeedfacf, 0);
  h.writeUInt32LE(cpu, 4);
  h.writeUInt32LE(cmds.length, 16);
  h.writeUInt32LE(cmds.reduce((n, c) => n + c.length, 0), 20);
  return Buffer.concat([h, ...cmds]);
}

/** A segment_command_64's payload after cmd and cmdsize: the 16-byte name, then zeros. */
const segment = (name: string): [number, Buffer] => {
  const p = Buffer.alloc(64);
  p.write(name, 0, 'latin1');
  return [0x19, p];
};

/** An MZ stub whose e_lfanew points at `PE\0\0` and the COFF Machine. */
function pe(machine: number): Buffer {
  const b = Buffer.alloc(0x100);
  b.write('MZ', 0, 'latin1');
  b.writeUInt32LE(0x80, 0x3c);
  b.write('PE\0\0', 0x80, 'latin1');
  b.writeUInt16LE(machine, 0x84);
  return b;
}

test('headers: each format and machine read back, and what is none of them is null', () => {
  const cases: Array<[string, Buffer, ReturnType<typeof readHeader>]> = [
    ['ELF x86-64', elf(0x3e), { format: 'elf', arch: 'x64' }],
    ['ELF AArch64', elf(0xb7), { format: 'elf', arch: 'arm64' }],
    ['ELF big-endian s390', elf(0x16, 2), { format: 'elf', arch: 'elf-machine-22' }],
    ['Mach-O x86_64', macho(0x01000007), { format: 'macho', arch: 'x64' }],
    ['Mach-O arm64', macho(0x0100000c), { format: 'macho', arch: 'arm64' }],
    ['PE AMD64', pe(0x8664), { format: 'pe', arch: 'x64' }],
    ['PE ARM64', pe(0xaa64), { format: 'pe', arch: 'arm64' }],
    ['MZ without PE', Buffer.concat([Buffer.from('MZ'), Buffer.alloc(0x3e)]), null],
    ['a shell script', Buffer.from('#!/bin/sh\nexec node "$@"\n'), null],
    ['empty', Buffer.alloc(0), null],
  ];
  for (const [name, bytes, want] of cases) assert.deepEqual(readHeader(bytes), want, name);
});

test('wrongArch: null for the platform it is for, a reason for any other', () => {
  assert.equal(wrongArch('linux-arm64', elf(0xb7)), null);
  assert.equal(wrongArch('linux-x64', elf(0xb7)), 'elf/arm64, expected elf/x64');
  assert.equal(wrongArch('darwin-x64', elf(0x3e)), 'elf/x64, expected macho/x64');
  assert.equal(wrongArch('win-x64', pe(0x8664)), null);
  assert.equal(wrongArch('win-x64', Buffer.from('text')), 'not an ELF, Mach-O or PE file');
  assert.equal(wrongArch('plan9-x64', pe(0x8664)), 'unknown target plan9-x64');
});

test('Mach-O load commands: segment names and whether a signature is there; cut short is null', () => {
  const signed = macho(0x01000007, [segment('__TEXT'), segment('__LINKEDIT'), [0x1d, Buffer.alloc(8)]]);
  assert.deepEqual(machoLoadCommands(signed), { segments: ['__TEXT', '__LINKEDIT'], signed: true });
  const injected = macho(0x01000007, [segment('__TEXT'), segment('NODE_SEA'), segment('__LINKEDIT')]);
  assert.deepEqual(machoLoadCommands(injected), { segments: ['__TEXT', 'NODE_SEA', '__LINKEDIT'], signed: false });
  assert.equal(machoLoadCommands(injected.subarray(0, 60)), null);
  assert.equal(machoLoadCommands(elf(0x3e)), null);
});
