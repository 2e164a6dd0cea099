// Command etcd is the etcd server, built from the etcd release that
// kube-apiserver v1.37 expects, for the tests' API server.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
