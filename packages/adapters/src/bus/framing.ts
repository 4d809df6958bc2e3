import { writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';

/**
 * Records in an append-only file, each framed by its length and CRC-32:
 * length (4 bytes) | CRC-32 of the body (4) | body. A tail that a crash cut short, or that
 * fails its checksum, is recognised and ends the file's readable part.
 */
export const FRAME_HEADER_BYTES = 8;
/** A length beyond this cannot be a record this code wrote: the frame is garbage, not a huge record. */
export const MAX_FRAME_BYTES = 256 * 1024 * 1024;

/** One framed record of `bodyBytes` bytes, the body written by `fill` from offset `at`. */
export function frame(bodyBytes: number, fill: (buffer: Buffer, at: number) => void): Buffer {
  const buffer = Buffer.allocUnsafe(FRAME_HEADER_BYTES + bodyBytes);
  buffer.writeUInt32LE(bodyBytes, 0);
  fill(buffer, FRAME_HEADER_BYTES);
  buffer.writeUInt32LE(crc32(buffer.subarray(FRAME_HEADER_BYTES)), 4);
  return buffer;
}

/**
 * Hands `visit` the body of each whole record at the start of `data`, in order, up to the first
 * one that is cut short, fails its checksum, or that `visit` refuses (returns false). Returns
 * the bytes of the records visit took.
 */
export function readFrames(data: Buffer, visit: (body: Buffer) => boolean): number {
  let at = 0;
  while (at + FRAME_HEADER_BYTES <= data.length) {
    const length = data.readUInt32LE(at);
    const end = at + FRAME_HEADER_BYTES + length;
    if (length === 0 || length > MAX_FRAME_BYTES || end > data.length) break;
    const body = data.subarray(at + FRAME_HEADER_BYTES, end);
    if (crc32(body) !== data.readUInt32LE(at + 4)) break;
    if (!visit(body)) break;
    at = end;
  }
  return at;
}

/** The whole size of the record starting at `at` as its header states it, when the header is there. */
export function frameBytesAt(data: Buffer, at: number): number | undefined {
  if (at + FRAME_HEADER_BYTES > data.length) return undefined;
  return FRAME_HEADER_BYTES + data.readUInt32LE(at);
}

/** write(2) until all of `data` is written. */
export function writeFully(fd: number, data: Buffer): void {
  let written = 0;
  while (written < data.length) written += writeSync(fd, data, written);
}
