// Command etcd is etcd's own server entry point (go.etcd.io/etcd/v3's main.go), built from the
// go.etcd.io/etcd/server/v3 module at the version kube-apiserver 1.34 is tested with (3.6.5):
// Debian bookworm ships etcd 3.4.23, older than any release 1.34 supports.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
