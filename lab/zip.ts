// Reading a zip archive (the extension's store packages) without an unzip program: its files by name, from the
// central directory (APPNOTE 4.3.12, 4.3.16), stored or deflated. For tests of what the build packed.
import { inflateRawSync } from 'node:zlib';

/** A zip archive's files by name; directories left out. Throws on anything that is not a zip. */
export function zipFiles(zip: Buffer): Map<string, Buffer> {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('not a zip: no end-of-central-directory record');
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const out = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`not a zip: no central directory header at ${at}`);
    const nameLength = zip.readUInt16LE(at + 28);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    const [method, size, local] = [zip.readUInt16LE(at + 10), zip.readUInt32LE(at + 20), zip.readUInt32LE(at + 42)];
    // The data follows the local header (APPNOTE 4.3.7): 30 bytes, the name and the local extra field.
    const data = zip.subarray(local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28)).subarray(0, size);
    if (!name.endsWith('/')) out.set(name, method === 8 ? inflateRawSync(data) : data);
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return out;
}
