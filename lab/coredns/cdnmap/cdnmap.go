// Package cdnmap is the lab's CDN authoritative server (issue 29 item 1): it answers every A and AAAA question in its
// zones with the addresses of the "edge" nearest the client, as a CDN's authoritative servers do, where the client is
// the EDNS Client Subnet a resolver sent (RFC 7871) or else the resolver's own address; and a TXT question with what it
// saw, in the words Google's o-o.myaddr.l.google.com uses ("edns0-client-subnet 192.0.2.0/24"), so one parser reads
// both. Corefile:
//
//	cdnmap {
//	    subnet 10.9.0.0/24 10.9.1.1 2001:db8:9:1::1   # clients in this subnet get these addresses
//	    default 10.9.2.1 2001:db8:9:2::1              # everyone else
//	}
package cdnmap

import (
	"context"
	"fmt"
	"net"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
)

const name = "cdnmap"

// TTL of every answer: short, as CDNs keep theirs.
const ttl = 20

type edge struct {
	subnet *net.IPNet
	v4, v6 net.IP
}

// CdnMap answers by client subnet.
type CdnMap struct {
	edges []edge
	other edge
}

func init() { plugin.Register(name, setup) }

func setup(c *caddy.Controller) error {
	m := CdnMap{}
	c.Next()
	for c.NextBlock() {
		key := c.Val()
		args := c.RemainingArgs()
		addrs := args
		var e edge
		switch key {
		case "subnet":
			if len(args) < 2 {
				return plugin.Error(name, c.ArgErr())
			}
			_, n, err := net.ParseCIDR(args[0])
			if err != nil {
				return plugin.Error(name, err)
			}
			e.subnet = n
			addrs = args[1:]
		case "default":
		default:
			return plugin.Error(name, c.Errf("unknown property %q", key))
		}
		for _, a := range addrs {
			ip := net.ParseIP(a)
			if ip == nil {
				return plugin.Error(name, c.Errf("not an address: %q", a))
			}
			if ip.To4() != nil {
				e.v4 = ip.To4()
			} else {
				e.v6 = ip
			}
		}
		if e.subnet == nil {
			m.other = e
		} else {
			m.edges = append(m.edges, e)
		}
	}
	dnsserver.GetConfig(c).AddPlugin(func(plugin.Handler) plugin.Handler { return m })
	return nil
}

// client is who the answer is for: the ECS address and source prefix when the query carries one, else the source.
func client(state request.Request) (ip net.IP, ecs *dns.EDNS0_SUBNET) {
	if opt := state.Req.IsEdns0(); opt != nil {
		for _, o := range opt.Option {
			if s, ok := o.(*dns.EDNS0_SUBNET); ok && s.SourceNetmask > 0 {
				return s.Address, s
			}
		}
	}
	return net.ParseIP(state.IP()), nil
}

func (m CdnMap) edgeFor(ip net.IP) edge {
	for _, e := range m.edges {
		if e.subnet.Contains(ip) {
			return e
		}
	}
	return m.other
}

// ServeDNS implements plugin.Handler.
func (m CdnMap) ServeDNS(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	state := request.Request{W: w, Req: r}
	ip, ecs := client(state)
	a := new(dns.Msg)
	a.SetReply(r)
	a.Authoritative = true
	hdr := dns.RR_Header{Name: state.QName(), Class: dns.ClassINET, Ttl: ttl}
	e := m.edgeFor(ip)
	switch state.QType() {
	case dns.TypeA:
		if e.v4 != nil {
			hdr.Rrtype = dns.TypeA
			a.Answer = append(a.Answer, &dns.A{Hdr: hdr, A: e.v4})
		}
	case dns.TypeAAAA:
		if e.v6 != nil {
			hdr.Rrtype = dns.TypeAAAA
			a.Answer = append(a.Answer, &dns.AAAA{Hdr: hdr, AAAA: e.v6})
		}
	case dns.TypeTXT:
		hdr.Rrtype = dns.TypeTXT
		hdr.Ttl = 0
		a.Answer = append(a.Answer, &dns.TXT{Hdr: hdr, Txt: []string{state.IP()}})
		if ecs != nil {
			a.Answer = append(a.Answer, &dns.TXT{Hdr: hdr, Txt: []string{fmt.Sprintf("edns0-client-subnet %s/%d", ecs.Address, ecs.SourceNetmask)}})
		}
	}
	if ecs != nil {
		// The answer holds for the whole subnet the resolver sent (scope = source prefix).
		o := a.SetEdns0(dns.DefaultMsgSize, false).IsEdns0()
		o.Option = append(o.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: ecs.Family, SourceNetmask: ecs.SourceNetmask, SourceScope: ecs.SourceNetmask, Address: ecs.Address})
	} else if r.IsEdns0() != nil {
		a.SetEdns0(dns.DefaultMsgSize, false)
	}
	_ = w.WriteMsg(a)
	return dns.RcodeSuccess, nil
}

// Name implements plugin.Handler.
func (m CdnMap) Name() string { return name }
