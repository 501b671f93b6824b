// The background's one connection to the native host.
// Lifecycle: start() opens a port (runtime.connectNative) and sends hello; a good hello makes the connection
// `connected`, anything else `down` with a stable code, and the next attempt follows with exponential backoff.
import { parseReply, PROTOCOL_VERSION, type BrowserDoh, type CurrentDns, type Reply, type Request, type RequestId } from '../../../common/schema.js';
import { isTransportId, type TransportId } from '../../../common/transports.js';
import { CODES, failure, type HostStatusCode } from '../../../common/errors.js';
import { type HostStatus } from '../messages/host.js';

/** The part of runtime.Port this module uses (Chromium's and Firefox's ports both have it). */
export interface NativePort {
  postMessage(message: unknown): void;
  disconnect(): void;
  onMessage: { addListener(listener: (message: unknown) => void): void };
  onDisconnect: { addListener(listener: (port: NativePort) => void): void };
  /** Firefox puts the reason for a disconnect here. */
  error?: { message?: string } | null;
}

/**
 * What the connection needs from its surroundings. This module touches no browser global: the port factory, the
 * browser's last error and the timers are passed in, so it runs under Node with a fake port
 * (extension/src/background/host-connection.test.ts).
 */
export interface HostConnectionDeps {
  /** Opens a port to the host (runtime.connectNative(HOST_NAME)). */
  connect(): NativePort;
  /** Chromium's reason for a disconnect: runtime.lastError, read inside onDisconnect. */
  lastError(): string | undefined;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
  now(): number;
}

/** Longest wait for the host's hello reply: Firefox's cold start to the first native message is 3–4 s here. */
export const HELLO_TIMEOUT_MS = 15_000;
/** First retry delay after a failure; doubles per consecutive failure up to BACKOFF_MAX_MS. */
export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_MAX_MS = 60_000;

/** The host's hello, as far as the extension relies on it. */
export interface HostHello {
  version: string;
  protocol: number;
  transports: TransportId[];
  /** The person's current DNS as the host found it on the machine; null from a host that does not say. */
  currentDns: CurrentDns | null;
  /** The machine reaches the IPv6 internet (the host's probe, as Chromium's); null from a host that does not say. */
  ipv6: boolean | null;
  /** The DoH of the browser that started the host; null when it could not tell or does not say. */
  browserDoh: BrowserDoh | null;
}

/** What a request's listener receives: the host's replies with its id, then possibly `closed` when the port went. */
export type RoutedReply = Reply | { id: RequestId; type: 'closed'; message: string };

type State =
  | { kind: 'connecting'; previous: HostStatus | null }
  | { kind: 'connected'; hello: HostHello }
  | { kind: 'down'; code: HostStatusCode; message: string; retryAt: number };

/** Delay before retry number `failures` (1-based): 1 s, 2 s, 4 s, … capped at BACKOFF_MAX_MS. */
export function backoffDelay(failures: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, failures - 1));
}

/**
 * What a disconnect means, from the browser's reason: Chromium says "Specified native messaging host not found." or
 * "Access to the specified native messaging host is forbidden." (manifest absent or not naming this extension),
 * Firefox "No such native application org.dnscost.host"; everything else is the host going away.
 */
export function classifyDisconnect(reason: string | undefined): { code: HostStatusCode; message: string } {
  const text = reason ?? 'the host closed the connection';
  if (/not found|no such native application|forbidden/i.test(text)) {
    return { code: CODES.HOST_MISSING, message: text };
  }
  return { code: CODES.HOST_DISCONNECTED, message: text };
}

/** Checks a hello reply: the hello, or why it is not one this extension can use. */
export function checkHello(reply: unknown): { ok: true; hello: HostHello } | { ok: false; code: HostStatusCode; message: string } {
  const parsed = parseReply(reply);
  if (!parsed.ok || parsed.reply.type !== 'hello') {
    return { ok: false, code: CODES.HOST_DISCONNECTED, message: `the host's hello reply is malformed: ${JSON.stringify(reply).slice(0, 200)}` };
  }
  const r = parsed.reply;
  if (r.protocol !== PROTOCOL_VERSION) {
    return {
      ok: false,
      code: CODES.HOST_INCOMPATIBLE,
      message: `dnscost-host ${r.version} speaks protocol ${r.protocol}; this extension speaks protocol ${PROTOCOL_VERSION}`,
    };
  }
  return { ok: true, hello: { version: r.version, protocol: r.protocol, transports: r.transports.filter(isTransportId), currentDns: r.currentDns ?? null, ipv6: r.ipv6 ?? null, browserDoh: r.browserDoh ?? null } };
}

/**
 * One native-host connection with automatic reconnection; see the lifecycle note at the top of this file.
 * The host's hello reply, if its protocol equals PROTOCOL_VERSION, makes the connection `connected`; anything else —
 * the browser finding no host, the host exiting or closing the port, no hello within HELLO_TIMEOUT_MS, another
 * protocol version — makes it `down` with a stable code and schedules the next attempt with exponential backoff (1 s
 * doubling to 60 s; reset by a good hello).
 */
export class HostConnection {
  private state: State = { kind: 'connecting', previous: null };
  private port: NativePort | null = null;
  private failures = 0;
  private helloTimer: unknown = null;
  private retryTimer: unknown = null;
  private attempt = 0;
  private waiters: Array<() => void> = [];
  private routes = new Map<RequestId, (reply: RoutedReply) => void>();

  constructor(private readonly deps: HostConnectionDeps) {}

  /**
   * Opens the first connection (call once). In Chromium the open port keeps the service worker alive; when the host
   * is missing the worker may be stopped between attempts and start() runs again on its next event, which is the
   * same as a retry.
   */
  start(): void {
    this.open();
  }

  /** The host's state now, as the popup shows it. */
  status(): HostStatus {
    const s = this.state;
    if (s.kind === 'connected') return { ok: true, connected: true, ...s.hello };
    if (s.kind === 'down') return { ok: false, connected: false, code: s.code, message: s.message, retryAt: s.retryAt };
    return s.previous ?? { ok: false, connected: false, code: CODES.HOST_CONNECTING, message: 'connecting to the native host', retryAt: null };
  }

  /** Resolves with the status once no attempt is in flight (at most HELLO_TIMEOUT_MS after an attempt began). */
  settled(): Promise<HostStatus> {
    if (this.state.kind !== 'connecting') return Promise.resolve(this.status());
    return new Promise((resolve) => this.waiters.push(() => resolve(this.status())));
  }

  /**
   * Retries at once when down (a connected or connecting host is left alone); resolves with the settled status. It
   * skips the wait (the popup's "Check again").
   */
  reconnectNow(): Promise<HostStatus> {
    if (this.state.kind === 'down') {
      this.clear('retry');
      this.open();
    }
    return this.settled();
  }

  /** The open port, for sending requests once connected (null otherwise). */
  connectedPort(): NativePort | null {
    return this.state.kind === 'connected' ? this.port : null;
  }

  /**
   * Sends `req` (a measure or cancel) when connected and routes replies with its id to `listener` until `release`
   * (or the port closes, which delivers `closed`). False when not connected: nothing was sent. When the port goes,
   * every open request's listener gets one `{type: 'closed'}` (the host process dies with its port, so nothing more
   * will come for it).
   */
  request(req: Exclude<Request, { type: 'hello' }>, listener: (reply: RoutedReply) => void): boolean {
    const port = this.connectedPort();
    if (!port) return false;
    this.routes.set(req.id, listener);
    try {
      port.postMessage(req);
    } catch {
      this.routes.delete(req.id);
      return false;
    }
    return true;
  }

  /**
   * Gives up on a host that stopped answering (stopped, or stuck mid-frame): its port is closed (the browser ends the
   * process with it), every open request is told `closed`, and a new host is started after the usual wait.
   */
  restart(message: string): void {
    if (this.state.kind === 'connected') this.fail({ code: CODES.HOST_DISCONNECTED, message });
  }

  /** Stops routing replies for `id` (after its `done` or `error`). */
  release(id: RequestId): void {
    this.routes.delete(id);
  }

  private open(): void {
    const attempt = ++this.attempt;
    const previous = this.state.kind === 'down' ? this.status() : null;
    this.state = { kind: 'connecting', previous };
    let port: NativePort;
    try {
      port = this.deps.connect();
    } catch (err) {
      // Chromium throws synchronously for a malformed host name or a missing nativeMessaging permission.
      this.fail(classifyDisconnect(err instanceof Error ? err.message : String(err)));
      return;
    }
    this.port = port;
    port.onMessage.addListener((message) => {
      if (attempt === this.attempt) this.onMessage(message);
    });
    port.onDisconnect.addListener((p) => {
      if (attempt !== this.attempt) return;
      // Chromium: runtime.lastError must be read inside this listener; Firefox: port.error.
      const reason = p.error?.message ?? port.error?.message ?? this.deps.lastError();
      this.port = null;
      this.fail(classifyDisconnect(reason));
    });
    this.helloTimer = this.deps.setTimer(() => {
      if (attempt !== this.attempt) return;
      this.fail({ code: CODES.HOST_DISCONNECTED, message: `the host did not answer hello within ${HELLO_TIMEOUT_MS / 1000} s` });
    }, HELLO_TIMEOUT_MS);
    port.postMessage({ id: `hello-${attempt}`, type: 'hello' });
  }

  private onMessage(message: unknown): void {
    if (this.state.kind === 'connected') {
      const r = message as { id?: unknown } | null;
      const id = typeof r === 'object' && r !== null && (typeof r.id === 'string' || typeof r.id === 'number') ? r.id : null;
      const listener = id === null ? undefined : this.routes.get(id);
      if (!listener) return;
      // Every reply passes the protocol's validator before anything reads it; a malformed one fails its request.
      const parsed = parseReply(message);
      listener(parsed.ok ? parsed.reply : { id: id!, type: 'error', ...failure(CODES.BAD_REPLY, `the host sent a malformed reply: ${parsed.problems.join('; ')}`) });
      return;
    }
    if (this.state.kind !== 'connecting') return;
    const m = message as { type?: unknown } | null;
    if (typeof m !== 'object' || m === null || m.type !== 'hello') return;
    const checked = checkHello(message);
    if (!checked.ok) {
      this.fail(checked);
      return;
    }
    this.clear('hello');
    this.failures = 0;
    this.state = { kind: 'connected', hello: checked.hello };
    this.notify();
  }

  /** Ends the current attempt: closes its port, records why, schedules the next one. */
  private fail(why: { code: HostStatusCode; message: string }): void {
    this.clear('hello');
    this.attempt++;
    if (this.port) {
      const port = this.port;
      this.port = null;
      port.disconnect();
    }
    this.failures++;
    const routes = [...this.routes.entries()];
    this.routes.clear();
    for (const [id, listener] of routes) listener({ id, type: 'closed', message: why.message });
    const delay = backoffDelay(this.failures);
    this.state = { kind: 'down', code: why.code, message: why.message, retryAt: this.deps.now() + delay };
    this.retryTimer = this.deps.setTimer(() => {
      this.retryTimer = null;
      this.open();
    }, delay);
    this.notify();
  }

  private clear(which: 'hello' | 'retry'): void {
    const key = which === 'hello' ? 'helloTimer' : 'retryTimer';
    if (this[key] !== null) this.deps.clearTimer(this[key]);
    this[key] = null;
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
