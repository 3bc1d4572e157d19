import { type LookupAddress, type LookupOptions, lookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { WEBHOOK_MESSAGES } from '../messages.js';

/** Which destinations a webhook may have beside public addresses. */
export interface DestinationRules {
  /** 127.0.0.0/8, ::1, and the unspecified 0.0.0.0 and ::: the machine itself. */
  loopback: boolean;
  /** Private networks, link-local (cloud metadata at 169.254.169.254 among them), and reserved ranges. */
  private: boolean;
  /** The setting that allows each, as a refusal names it. Default `webhooks.allow.<kind>`. */
  allowedBy?: { loopback?: string; private?: string };
}

function settingFor(kind: 'loopback' | 'private', rules: DestinationRules): string {
  return rules.allowedBy?.[kind] ?? `webhooks.allow.${kind}`;
}

export type AddressKind = 'public' | 'loopback' | 'private';

// 0.0.0.0 and :: are "this host" when connected to (Linux reaches its own listeners through them):
// the machine itself, as 127.0.0.1 and ::1 are.
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('0.0.0.0', 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addAddress('::', 'ipv6');

/**
 * Every range that is not the public internet: private, shared, link-local, reserved, multicast,
 * and Teredo (2001::/32), whose server and client addresses it hides. IPv6 forms of an IPv4
 * address are judged as that address (see `embeddedIpv4`).
 */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail read as two), or undefined. */
function groupsOf(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const part = (side: string) =>
    side === '' ? [] : side.split(':').map((group) => Number.parseInt(group, 16));
  const front = part(head);
  const back = tail === undefined ? [] : part(tail);
  const groups = [...front, ...Array(8 - front.length - back.length).fill(0), ...back];
  return groups.length === 8 && groups.every((group) => Number.isInteger(group)) ? groups : undefined;
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 address an IPv6 address stands for, in whichever way it is written: mapped
 * (`::ffff:0:0/96`), IPv4-compatible (`::/96`), NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`); a
 * URL writes them in hexadecimal (`[::ffff:7f00:1]` is 127.0.0.1). Undefined for any other.
 */
function embeddedIpv4(address: string): string | undefined {
  const groups = groupsOf(address);
  if (!groups) return undefined;
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const zeroTo80 = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  // ::1 and :: are IPv6's own loopback and unspecified address.
  if (zeroTo80 && g5 === 0 && g6 === 0 && g7 <= 1) return undefined;
  if (zeroTo80 && (g5 === 0xffff || g5 === 0)) return ipv4Of(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return ipv4Of(g6, g7);
  if (g0 === 0x2002) return ipv4Of(g1, g2);
  return undefined;
}

/** Where an IP address is: on this machine, on a network that is not the internet, or public. */
export function addressKind(given: string): AddressKind {
  const address = isIP(given) === 6 ? (embeddedIpv4(given) ?? given) : given;
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  if (LOOPBACK.check(address, family)) return 'loopback';
  return NOT_PUBLIC.check(address, family) ? 'private' : 'public';
}

/** Why a webhook may not go to this address, or undefined when it may. */
export function refusedAddress(host: string, address: string, rules: DestinationRules): string | undefined {
  const kind = addressKind(address);
  if (kind === 'public' || rules[kind]) return undefined;
  return WEBHOOK_MESSAGES.refusedAddress(host, address, kind, settingFor(kind, rules));
}

/** The host of a URL as `lookup` and `isIP` take it: without IPv6's brackets. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Names that are the machine itself whatever DNS says. */
function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * What can be told of a destination without DNS: an address written in the URL, or a name of the
 * machine itself. Undefined when it may be used (as far as can be told before it is looked up).
 */
export function refusedLiteral(url: URL, rules: DestinationRules): string | undefined {
  const host = bareHost(url);
  if (isIP(host) !== 0) return refusedAddress(host, host, rules);
  if (isLocalName(host) && !rules.loopback) {
    return WEBHOOK_MESSAGES.refusedAddress(host, host, 'loopback', settingFor('loopback', rules));
  }
  return undefined;
}

/**
 * A `lookup` for an HTTP request that refuses an address the rules forbid. The connection is made
 * to the address checked here: a name that resolves elsewhere the next time (DNS rebinding) cannot
 * slip between the check and the connection.
 */
export function guardedLookup(rules: DestinationRules): LookupFunction {
  return (host: string, options: LookupOptions, callback) => {
    lookup(host, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) {
        callback(error, []);
        return;
      }
      for (const { address } of addresses) {
        const refusal = refusedAddress(host, address, rules);
        if (refusal) {
          callback(Object.assign(new Error(refusal), { code: 'EDESTINATION' }), []);
          return;
        }
      }
      const [first] = addresses;
      if (options.all) callback(null, addresses);
      else if (first) callback(null, first.address, first.family);
      else callback(Object.assign(new Error(`no address for ${host}`), { code: 'ENOTFOUND' }), []);
    });
  };
}

/** The error code of a destination the rules refused, as the lookup reports it. */
export const REFUSED_DESTINATION = 'EDESTINATION';
