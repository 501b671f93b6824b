// The engine's view of an endpoint: one endpoint of one resolver with its URL and the transport that runs it, and
// the list of them a measure request names.
import type { EndpointSpec, MeasureRequest, ResolverSpec } from '../../../common/schema.js';
import type { TransportId } from '../../../common/transports.js';
import { endpointUrl } from '../endpoints.js';
import { REGISTRY } from '../transports/registry.js';
import type { Transport } from '../transports/transport.js';

/** One endpoint of one resolver, as the engine runs it. */
export interface MeasuredEndpoint {
  resolver: ResolverSpec;
  endpoint: EndpointSpec;
  url: string;
  transport: Transport;
}

/** Every (resolver, endpoint) pair a request names, filtered to the requested transports. */
export function targetsOf(
  req: Pick<MeasureRequest, 'resolvers' | 'transports'>,
  transports: Record<TransportId, Transport> = REGISTRY,
): MeasuredEndpoint[] {
  const out: MeasuredEndpoint[] = [];
  for (const resolver of req.resolvers) {
    for (const endpoint of resolver.endpoints) {
      if (req.transports && !req.transports.includes(endpoint.transport)) continue;
      out.push({ resolver, endpoint, url: endpointUrl(endpoint), transport: transports[endpoint.transport] });
    }
  }
  return out;
}
