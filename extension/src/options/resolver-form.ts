// The options page's pure parts (no DOM): checking a custom endpoint's fields with a message per field, editing the
// resolver list (defaults on/off, custom ones added and removed), reading an exclusion, and the consent wording.
// Tested under Node (extension/src/options/resolver-form.test.ts).
import * as v from 'valibot';
import { PUBLIC_RESOLVERS, isPublicResolverId } from '../../../common/default-resolvers.js';
import { normalizeHostname } from '../../../common/hostname.js';
import { endpointSpec, type EndpointSpec, type ResolverSpec } from '../../../common/schema.js';
import { TRANSPORTS, isEncrypted, type TransportId } from '../../../common/transports.js';

/** The port each transport uses unless told otherwise (RFC 1035, RFC 7858, RFC 8484, RFC 9250 §4.1.1; DoH3 on UDP 443). */
export const DEFAULT_PORTS: Record<TransportId, number> = { udp: 53, tcp: 53, dot: 853, doh: 443, doh1: 443, doq: 853, doh3: 443 };

/** The custom-endpoint form's fields, as typed. */
export interface EndpointFields {
  name: string;
  transport: string;
  address: string;
  port: string;
  serverName: string;
  path: string;
  method: string;
}
export type EndpointField = keyof EndpointFields;

const isIp = (s: string) => v.is(v.pipe(v.string(), v.ip()), s);

/** The endpoint the fields describe, or one message per wrong field (shown beside that field). */
export function checkEndpointFields(f: EndpointFields): { ok: true; name: string; endpoint: EndpointSpec } | { ok: false; errors: Partial<Record<EndpointField, string>> } {
  const errors: Partial<Record<EndpointField, string>> = {};
  const name = f.name.trim();
  if (!name) errors.name = 'Give the resolver a name, e.g. “Office DNS”.';
  else if (name.length > 128) errors.name = 'Use at most 128 characters.';
  const transport = f.transport as TransportId;
  if (!(transport in DEFAULT_PORTS)) errors.transport = 'Choose a transport.';
  const address = f.address.trim().replace(/^\[(.*)\]$/, '$1');
  if (!address) errors.address = 'Enter the resolver’s IP address (dnscost never looks up its resolvers).';
  else if (!isIp(address)) errors.address = `“${address}” is not an IP address; enter e.g. 192.0.2.53 or 2001:db8::53.`;
  const portText = f.port.trim();
  const port = portText === '' && transport in DEFAULT_PORTS ? DEFAULT_PORTS[transport] : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) errors.port = 'The port is a whole number from 1 to 65535.';
  const encrypted = transport in DEFAULT_PORTS && isEncrypted(transport);
  let serverName: string | undefined;
  if (encrypted) {
    const sn = f.serverName.trim();
    if (!sn) errors.serverName = 'Enter the name on the resolver’s certificate (e.g. dns.example), so the TLS check means something.';
    else if (isIp(sn)) serverName = sn;
    else {
      try {
        serverName = normalizeHostname(sn);
      } catch (err) {
        errors.serverName = (err as Error).message;
      }
    }
  }
  let path: string | undefined;
  let method: 'GET' | 'POST' | undefined;
  if (transport === 'doh' || transport === 'doh1' || transport === 'doh3') {
    path = f.path.trim() || '/dns-query';
    if (!path.startsWith('/') || path.length > 512 || /[\s?#]/.test(path)) errors.path = 'The path starts with “/” and has no spaces, “?” or “#”, e.g. /dns-query.';
    method = f.method === 'GET' ? 'GET' : 'POST';
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const endpoint: EndpointSpec = { transport, address, port, ...(serverName ? { serverName } : {}), ...(path ? { path, method } : {}) };
  // The schema the host validates with has the last word.
  if (!v.is(endpointSpec, endpoint)) return { ok: false, errors: { address: 'This endpoint is not valid.' } };
  return { ok: true, name, endpoint };
}

/** An id for a new custom resolver named `name`, unused in `resolvers`. */
export function customResolverId(name: string, resolvers: readonly ResolverSpec[]): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'resolver';
  let id = `custom-${slug}`;
  for (let n = 2; resolvers.some((r) => r.id === id); n++) id = `custom-${slug}-${n}`;
  return id;
}

/** `resolvers` with `endpoint` added: to the custom resolver of that name, or as a new custom resolver. */
export function addCustomEndpoint(resolvers: readonly ResolverSpec[], name: string, endpoint: EndpointSpec): ResolverSpec[] {
  const same = resolvers.find((r) => !isPublicResolverId(r.id) && r.name === name);
  if (same) return resolvers.map((r) => (r === same ? { ...r, endpoints: [...r.endpoints, endpoint] } : r));
  return [...resolvers, { id: customResolverId(name, resolvers), name, endpoints: [endpoint] }];
}

/** `resolvers` with the default `id` turned on (in PUBLIC_RESOLVERS order, before custom ones) or off. */
export function toggleDefault(resolvers: readonly ResolverSpec[], id: string, on: boolean): ResolverSpec[] {
  const defaults = PUBLIC_RESOLVERS.filter((d) => (d.id === id ? on : resolvers.some((r) => r.id === d.id)));
  return [...defaults.map((d) => resolvers.find((r) => r.id === d.id) ?? d), ...resolvers.filter((r) => !isPublicResolverId(r.id))];
}

/** A site to exclude from what a person typed (a hostname or a URL): the hostname, or why not. */
export function exclusionFromInput(text: string): { ok: true; hostname: string } | { ok: false; message: string } {
  let t = text.trim();
  if (!t) return { ok: false, message: 'Enter a site, e.g. bank.example.' };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(t)) {
    try {
      t = new URL(t).hostname;
    } catch {
      return { ok: false, message: 'That address could not be read; enter just the site, e.g. bank.example.' };
    }
  }
  try {
    return { ok: true, hostname: normalizeHostname(t) };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}

/** One endpoint in words: “DNS over TLS to 192.0.2.53 port 853 (certificate name dns.example)”. */
export function describeEndpoint(e: EndpointSpec): string {
  const where = e.address.includes(':') ? `[${e.address}]` : e.address;
  const tls = e.serverName ? ` (certificate name ${e.serverName})` : '';
  const path = e.path ? `, path ${e.path}${e.method ? ` by ${e.method}` : ''}` : '';
  return `${TRANSPORTS[e.transport].name} to ${where} port ${e.port}${tls}${path}`;
}

/** Per resolver, which transports carry the names there, in words (the consent text). */
export function consentDestinations(resolvers: readonly ResolverSpec[]): Array<{ resolver: string; how: string; clearText: boolean }> {
  return resolvers.map((r) => ({
    resolver: r.name,
    how: r.endpoints.map(describeEndpoint).join('; '),
    clearText: r.endpoints.some((e) => !isEncrypted(e.transport)),
  }));
}
