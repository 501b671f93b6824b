module dnscost.test/lab/refclient

go 1.26.0

require (
	github.com/miekg/dns v1.1.68
	github.com/quic-go/quic-go v0.64.1
	golang.org/x/net v0.56.0
)

require (
	github.com/quic-go/qpack v0.6.0 // indirect
	golang.org/x/crypto v0.54.0 // indirect
	golang.org/x/mod v0.37.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.40.0 // indirect
	golang.org/x/tools v0.47.0 // indirect
)
