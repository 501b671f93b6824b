module dnscost.test/lab/refclient

go 1.26

require (
	github.com/miekg/dns v1.1.68
	golang.org/x/net v0.47.0
)

require (
	golang.org/x/mod v0.29.0 // indirect
	golang.org/x/sync v0.18.0 // indirect
	golang.org/x/sys v0.38.0 // indirect
	golang.org/x/text v0.31.0 // indirect
	golang.org/x/tools v0.38.0 // indirect
)
