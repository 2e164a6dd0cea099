package build

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// owner is a numeric user and group.
type owner struct{ uid, gid int }

// etcLookup returns a file of the destination stage (/etc/passwd or
// /etc/group) and whether it exists.
type etcLookup func(path string) ([]byte, bool, error)

// resolveChown turns a --chown value (`user[:group]`, names or numbers) into
// numbers, reading names from the stage's /etc/passwd and /etc/group as
// Docker does. A user given alone also sets the group: its primary group
// for a name, the same number for a number.
func resolveChown(spec string, etc etcLookup) (owner, error) {
	user, group, hasGroup := strings.Cut(spec, ":")
	if user == "" || (hasGroup && group == "") {
		return owner{}, fmt.Errorf("--chown=%s: want user[:group]", spec)
	}
	var o owner
	uid, numeric := parseID(user)
	if numeric {
		o = owner{uid: uid, gid: uid}
	} else {
		data, ok, err := etc("/etc/passwd")
		if err != nil {
			return owner{}, err
		}
		if !ok {
			return owner{}, fmt.Errorf("--chown=%s: user %q cannot be looked up: the stage has no /etc/passwd", spec, user)
		}
		u, found := lookupPasswd(data, user)
		if !found {
			return owner{}, fmt.Errorf("--chown=%s: no user %q in /etc/passwd", spec, user)
		}
		o = owner{uid: u.uid, gid: u.gid}
	}
	if !hasGroup {
		return o, nil
	}
	if gid, ok := parseID(group); ok {
		o.gid = gid
		return o, nil
	}
	data, ok, err := etc("/etc/group")
	if err != nil {
		return owner{}, err
	}
	if !ok {
		return owner{}, fmt.Errorf("--chown=%s: group %q cannot be looked up: the stage has no /etc/group", spec, group)
	}
	gid, found := lookupGroup(data, group)
	if !found {
		return owner{}, fmt.Errorf("--chown=%s: no group %q in /etc/group", spec, group)
	}
	o.gid = gid
	return o, nil
}

// parseID parses a numeric user or group id.
func parseID(s string) (int, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

// lookupPasswd finds name in /etc/passwd content (name:pw:uid:gid:...).
func lookupPasswd(data []byte, name string) (owner, bool) {
	var out owner
	found := false
	eachRecord(data, func(f []string) bool {
		if len(f) < 4 || f[0] != name {
			return true
		}
		uid, ok1 := parseID(f[2])
		gid, ok2 := parseID(f[3])
		if !ok1 || !ok2 {
			return true
		}
		out, found = owner{uid: uid, gid: gid}, true
		return false
	})
	return out, found
}

// lookupGroup finds name in /etc/group content (name:pw:gid:members).
func lookupGroup(data []byte, name string) (int, bool) {
	var gid int
	found := false
	eachRecord(data, func(f []string) bool {
		if len(f) < 3 || f[0] != name {
			return true
		}
		id, ok := parseID(f[2])
		if !ok {
			return true
		}
		gid, found = id, true
		return false
	})
	return gid, found
}

// eachRecord calls fn with the colon-separated fields of each line that is
// not blank or a comment, until fn returns false.
func eachRecord(data []byte, fn func([]string) bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !fn(strings.Split(line, ":")) {
			return
		}
	}
}

// parseChmod parses a --chmod value: octal permission bits, at most 07777.
func parseChmod(s string) (uint32, error) {
	if s == "" || strings.TrimLeft(s, "01234567") != "" || len(s) > 5 {
		return 0, fmt.Errorf("--chmod=%s: only octal modes (such as 0755) are supported", s)
	}
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o7777 {
		return 0, fmt.Errorf("--chmod=%s: want an octal mode up to 7777", s)
	}
	return uint32(n), nil
}
