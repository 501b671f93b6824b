// The options page's pure parts (no DOM): checking a custom endpoint's fields with a message per field, editing the
// resolver list (defaults on/off, custom ones added and removed), reading an exclusion, and the consent wording.
// Tested under Node (extension/src/options/resolver-form.test.ts).
import * as v from 'valibot';
import { PUBLIC_RESOLVERS, isPublicResolverId } from '../../../common/default-resolvers.js';
import { normalizeHostname } from '../../../common/hostname.js';
import { endpointSpec, type EndpointSpec, type ResolverSpec } from '../../../common/schema.js';
import { isEncrypted, isTransportId, TRANSPORTS, type TransportId } from '../../../common/transports.js';
import type { I18n } from '../i18n.js';

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
export function checkEndpointFields(f: EndpointFields, { t }: I18n): { ok: true; name: string; endpoint: EndpointSpec } | { ok: false; errors: Partial<Record<EndpointField, string>> } {
  const errors: Partial<Record<EndpointField, string>> = {};
  const name = f.name.trim();
  if (!name) errors.name = t('form_name_missing');
  else if (name.length > 128) errors.name = t('form_name_long', 128);
  const transport = f.transport as TransportId;
  const known = isTransportId(transport);
  if (!known) errors.transport = t('form_transport_missing');
  const address = f.address.trim().replace(/^\[(.*)\]$/, '$1');
  if (!address) errors.address = t('form_address_missing');
  else if (!isIp(address)) errors.address = t('form_address_not_ip', address);
  const portText = f.port.trim();
  const port = portText === '' && known ? TRANSPORTS[transport].url.defaultPort : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) errors.port = t('form_port_range');
  const encrypted = known && isEncrypted(transport);
  let serverName: string | undefined;
  if (encrypted) {
    const sn = f.serverName.trim();
    if (!sn) errors.serverName = t('form_server_name_missing');
    else if (isIp(sn)) serverName = sn;
    else {
      try {
        serverName = normalizeHostname(sn);
      } catch {
        errors.serverName = t('form_hostname_invalid', sn);
      }
    }
  }
  let path: string | undefined;
  let method: 'GET' | 'POST' | undefined;
  const form = known ? TRANSPORTS[transport].url : null;
  if (form?.path) {
    path = f.path.trim() || form.path;
    if (!path.startsWith('/') || path.length > 512 || /[\s?#]/.test(path)) errors.path = t('form_path_invalid');
    method = f.method === 'GET' || f.method === 'POST' ? f.method : (form.method ?? 'POST');
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const endpoint: EndpointSpec = { transport, address, port, ...(serverName ? { serverName } : {}), ...(path ? { path, method } : {}) };
  // The schema the host validates with has the last word.
  if (!v.is(endpointSpec, endpoint)) return { ok: false, errors: { address: t('form_endpoint_invalid') } };
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
export function exclusionFromInput(text: string, { t }: I18n): { ok: true; hostname: string } | { ok: false; message: string } {
  let site = text.trim();
  if (!site) return { ok: false, message: t('form_site_missing') };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(site)) {
    try {
      site = new URL(site).hostname;
    } catch {
      return { ok: false, message: t('form_site_unreadable') };
    }
  }
  if (isIp(site.replace(/^\[(.*)\]$/, '$1'))) return { ok: false, message: t('form_site_ip', site) };
  try {
    return { ok: true, hostname: normalizeHostname(site) };
  } catch {
    return { ok: false, message: t('form_hostname_invalid', site) };
  }
}

/** One endpoint in words: “DNS over TLS to 192.0.2.53 port 853 (certificate name dns.example)”. */
export function describeEndpoint(e: EndpointSpec, i18n: I18n): string {
  const { t } = i18n;
  const where = e.address.includes(':') ? `[${e.address}]` : e.address;
  const tls = e.serverName ? ` ${t('endpoint_certificate', e.serverName)}` : '';
  const path = e.path ? t(e.method ? 'endpoint_path_method' : 'endpoint_path', e.path, e.method ?? '') : '';
  // Port numbers are not quantities: no digit grouping.
  return `${t('endpoint_to', i18n.transport(e.transport), where, String(e.port))}${tls}${path}`;
}

/** Per resolver, which transports carry the names there, in words (the consent text). */
export function consentDestinations(resolvers: readonly ResolverSpec[], i18n: I18n): Array<{ resolver: string; how: string; clearText: boolean }> {
  return resolvers.map((r) => ({
    resolver: r.name,
    how: r.endpoints.map((e) => describeEndpoint(e, i18n)).join('; '),
    clearText: r.endpoints.some((e) => !isEncrypted(e.transport)),
  }));
}
