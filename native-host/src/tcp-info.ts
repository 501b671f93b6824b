// Kernel TCP counters for one socket (Linux TCP_INFO via getsockopt), so segments and payload bytes are counted,
// not modelled. Where the platform has no TCP_INFO (or the FFI cannot load) callers fall back to estimates.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { PACKAGED_FFI } from './paths.js';

/** Cumulative counters of one TCP connection, as the kernel keeps them. */
export interface TcpCounters {
  /** Payload bytes sent, retransmissions included (tcpi_bytes_sent). */
  bytesSent: number;
  /** Payload bytes received (tcpi_bytes_received). */
  bytesReceived: number;
  /** Segments sent, pure ACKs, SYN and retransmissions included (tcpi_segs_out). */
  segsOut: number;
  /** Segments received (tcpi_segs_in). */
  segsIn: number;
  totalRetrans: number;
  /** TCP timestamps negotiated: every segment then carries a 12-byte option (RFC 7323). */
  timestamps: boolean;
  /** SACK negotiated (RFC 2018). */
  sack: boolean;
  /** Window scaling negotiated (RFC 7323). */
  wscale: boolean;
}

/** Which options a SYN offers or a handshake negotiated; they set the size of the SYN and SYN-ACK. */
export interface SynOptions {
  timestamps: boolean;
  sack: boolean;
  wscale: boolean;
}

const SOL_TCP = 6;
const TCP_INFO = 11;
const TCPI_OPT_TIMESTAMPS = 1;
const TCPI_OPT_SACK = 2;
const TCPI_OPT_WSCALE = 4;
const INFO_SIZE = 232;

type GetSockOpt = (fd: number, level: number, name: number, buf: Buffer, len: number[]) => number;

let getsockopt: GetSockOpt | null | undefined;

function load(): GetSockOpt | null {
  if (getsockopt !== undefined) return getsockopt;
  getsockopt = null;
  if (process.platform !== 'linux') return null;
  try {
    // Packaged, koffi's native module sits beside the executable (a single executable cannot embed an addon); its
    // exports are koffi's API itself, which the package's JavaScript only re-exports.
    const koffi = (PACKAGED_FFI ? createRequire(PACKAGED_FFI)(PACKAGED_FFI) : createRequire(import.meta.url)('koffi')) as typeof import('koffi');
    const libc = koffi.load('libc.so.6');
    getsockopt = libc.func('int getsockopt(int, int, int, _Out_ uint8_t *buf, _Inout_ uint32_t *len)') as GetSockOpt;
  } catch (err) {
    process.stderr.write(`dnscost-host: TCP_INFO unavailable, byte counts will be estimated (${String(err)})\n`);
  }
  return getsockopt;
}

/** The socket's file descriptor, read once while the handle is open (it is gone after close). */
export function socketFd(socket: Socket): number | null {
  const handle = (socket as unknown as { _handle?: { fd?: number } })._handle;
  return typeof handle?.fd === 'number' && handle.fd >= 0 ? handle.fd : null;
}

const INFO_BUFFER = Buffer.alloc(INFO_SIZE);

/** Reads TCP_INFO for `fd`; null when unavailable (not Linux, FFI missing, socket closed, kernel too old). */
export function readTcpInfo(fd: number | null): TcpCounters | null {
  if (fd === null) return null;
  const fn = load();
  if (!fn) return null;
  // One buffer for every read: the host is single-threaded and the result is decoded before returning.
  const buf = INFO_BUFFER;
  const len = [INFO_SIZE];
  if (fn(fd, SOL_TCP, TCP_INFO, buf, len) !== 0) return null;
  // tcpi_bytes_sent arrived in Linux 4.19; without it the struct is shorter and the figure unknown.
  if ((len[0] ?? 0) < 208) return null;
  return {
    bytesSent: Number(buf.readBigUInt64LE(200)),
    bytesReceived: Number(buf.readBigUInt64LE(128)),
    segsOut: buf.readUInt32LE(136),
    segsIn: buf.readUInt32LE(140),
    totalRetrans: buf.readUInt32LE(100),
    timestamps: (buf.readUInt8(5) & TCPI_OPT_TIMESTAMPS) !== 0,
    sack: (buf.readUInt8(5) & TCPI_OPT_SACK) !== 0,
    wscale: (buf.readUInt8(5) & TCPI_OPT_WSCALE) !== 0,
  };
}

let offered: SynOptions | null | undefined;

/**
 * The options this host's SYNs offer (Linux: net.ipv4.tcp_timestamps, tcp_sack, tcp_window_scaling, which apply to
 * IPv6 too); null where they cannot be read. The SYN carries them even when the server declines some.
 */
export function offeredSynOptions(): SynOptions | null {
  if (offered !== undefined) return offered;
  offered = null;
  if (process.platform !== 'linux') return null;
  try {
    const on = (name: string) => readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim() !== '0';
    offered = { timestamps: on('tcp_timestamps'), sack: on('tcp_sack'), wscale: on('tcp_window_scaling') };
  } catch {
    offered = null;
  }
  return offered;
}
