// The resolvers a person gets without configuring anything: their current DNS as found on this machine
// (native-host/src/current-dns/, made into resolvers by common/default-resolvers.ts) and the well-known public ones,
// so measuring never needs a lookup of its own. Never exercised live in tests: checked against fixture files.
import { currentDnsResolvers, PUBLIC_RESOLVERS, publicResolvers } from '../../common/default-resolvers.js';
import type { CurrentDns, ResolverSpec } from '../../common/schema.js';

/** The public defaults (Cloudflare, Google, Quad9) live in common/ so the extension shares them. */
export { PUBLIC_RESOLVERS };

/**
 * The default resolvers by id: `system` and `system-stub` (the current DNS, when found), `cloudflare`, `google`,
 * `quad9` (at their IPv6 addresses with `family` 6).
 */
export function defaultResolvers(current: CurrentDns | null, family: 4 | 6 = 4): ResolverSpec[] {
  return [...(current ? currentDnsResolvers(current) : []), ...publicResolvers(family)];
}
