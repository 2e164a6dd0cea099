package build

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// binfmtDir is where the kernel lists binfmt_misc handlers.
const binfmtDir = "/proc/sys/fs/binfmt_misc"

// elfMachine is the ELF header a program of each architecture starts
// with, up to e_machine: class, byte order and machine number.
var elfMachine = map[string]struct {
	class, data byte
	machine     uint16
}{
	"amd64":    {2, 1, 62},
	"386":      {1, 1, 3},
	"arm64":    {2, 1, 183},
	"arm":      {1, 1, 40},
	"ppc64le":  {2, 1, 21},
	"s390x":    {2, 2, 22},
	"riscv64":  {2, 1, 243},
	"mips64le": {2, 1, 8},
	"loong64":  {2, 1, 258},
}

// elfHeader is the first 20 bytes of an executable for arch.
func elfHeader(arch string) ([]byte, bool) {
	m, ok := elfMachine[arch]
	if !ok {
		return nil, false
	}
	h := make([]byte, 20)
	copy(h, "\x7fELF")
	h[4], h[5], h[6] = m.class, m.data, 1
	if m.data == 1 {
		h[16], h[17] = 2, 0
		h[18], h[19] = byte(m.machine), byte(m.machine>>8)
	} else {
		h[16], h[17] = 0, 2
		h[18], h[19] = byte(m.machine>>8), byte(m.machine)
	}
	return h, true
}

// nativeArch reports whether programs for arch run on this machine without
// an emulator.
func nativeArch(arch string) bool {
	return arch == runtime.GOARCH || (runtime.GOARCH == "amd64" && arch == "386") || (runtime.GOARCH == "arm64" && arch == "arm")
}

// binfmtHandler finds an enabled binfmt_misc handler in dir for programs
// of arch and returns its name, its interpreter and whether the kernel
// opened the interpreter when it was registered (flag F), so it works
// inside a chroot.
func binfmtHandler(dir, arch string) (name, interp string, fixed bool, err error) {
	hdr, ok := elfHeader(arch)
	if !ok {
		return "", "", false, fmt.Errorf("no ELF header known for %s", arch)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", "", false, err
	}
	for _, e := range ents {
		if e.Name() == "register" || e.Name() == "status" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var enabled bool
		var offset int
		var magic, mask []byte
		var flags, in string
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, " ")
			switch {
			case line == "enabled":
				enabled = true
			case k == "interpreter":
				in = v
			case k == "flags:":
				flags = v
			case k == "offset":
				offset, _ = strconv.Atoi(v)
			case k == "magic":
				magic, _ = hex.DecodeString(v)
			case k == "mask":
				mask, _ = hex.DecodeString(v)
			}
		}
		if !enabled || len(magic) == 0 || offset < 0 || offset+len(magic) > len(hdr) {
			continue
		}
		if matchMagic(hdr[offset:offset+len(magic)], magic, mask) {
			return e.Name(), in, strings.Contains(flags, "F"), nil
		}
	}
	return "", "", false, errors.New("none registered")
}

func matchMagic(b, magic, mask []byte) bool {
	for i := range magic {
		m := byte(0xff)
		if i < len(mask) {
			m = mask[i]
		}
		if b[i]&m != magic[i]&m {
			return false
		}
	}
	return true
}

// canRun reports why RUN cannot execute programs for platform p here.
func (l *Local) canRun(p v1.Platform) error {
	if p.OS != "linux" {
		return fmt.Errorf("cannot run programs for %s: RUN runs Linux programs only", platformString(p))
	}
	if nativeArch(p.Architecture) {
		return nil
	}
	_, interp, fixed, err := binfmtHandler(l.binfmtDir, p.Architecture)
	if err != nil {
		return fmt.Errorf("cannot run programs for %s on this %s machine: no emulator is registered with binfmt_misc (%s: %v); register one (for example with Debian's qemu-user-static, or `docker run --privileged tonistiigi/binfmt --install %s`), or limit platform.yaml's build.platforms to linux/%s",
			platformString(p), runtime.GOARCH, l.binfmtDir, err, p.Architecture, runtime.GOARCH)
	}
	if !fixed {
		return fmt.Errorf("cannot run programs for %s: the binfmt_misc emulator %s is registered without the F flag, so it cannot be found inside the build's root filesystem; register it with F (fix binary)", platformString(p), interp)
	}
	return nil
}
