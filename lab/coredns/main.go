// Command coredns is the lab's CoreDNS: only the plugins the lab uses, so the build stays small.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "dnscost/lab/coredns/cdnmap"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/file"
	_ "github.com/coredns/coredns/plugin/https"
	_ "github.com/coredns/coredns/plugin/https3"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/quic"
	_ "github.com/coredns/coredns/plugin/template"
	_ "github.com/coredns/coredns/plugin/timeouts"
	_ "github.com/coredns/coredns/plugin/tls"
)

// Directives order decides plugin chaining; CoreDNS has no default for a custom build. This is the order of
// CoreDNS's own plugin.cfg: log before the plugins that answer (else it never sees their queries), template before
// file. cdnmap (the lab's CDN authoritative, ./cdnmap) answers what reaches it, like template.
func init() {
	dnsserver.Directives = []string{
		"tls", "quic", "https", "https3", "timeouts", "bind", "errors", "log", "cdnmap", "template", "file",
	}
}

func main() { coremain.Run() }
