// The person's current DNS in a test's namespace: a plain Do53 server on UDP port 53 of `address` that answers per
// name (split horizon needs different answers for names of one zone) and can lose a question. A test fixture, since
// no real resolver drops one record type of one name on demand.
import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';

/** How the server answers one question: an A record's address (none for other types), no data, NXDOMAIN, or silence. */
export type CurrentAnswer = { a: string } | 'nodata' | 'nxdomain' | 'drop';

/** Starts the server; every question's name (lower case) goes into `asked`. Close the socket to stop it. */
export async function currentDnsServer(address: string, answer: (name: string, type: string) => CurrentAnswer, asked: string[] = []): Promise<dgram.Socket> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    const q = dnsPacket.decode(msg);
    const question = q.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase();
    asked.push(name);
    const how = answer(name, question.type);
    if (how === 'drop') return;
    socket.send(dnsPacket.encode({
      type: 'response', id: q.id, flags: dnsPacket.RECURSION_AVAILABLE | (how === 'nxdomain' ? 3 : 0), questions: q.questions,
      answers: typeof how === 'object' && question.type === 'A' ? [{ type: 'A', name: question.name, ttl: 60, data: how.a }] : [],
    }), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => socket.bind(53, address, r));
  return socket;
}
