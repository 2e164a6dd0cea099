package fleet

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// JournalName is the file in the fleet folder that makes a change of the
// folder all-or-nothing. Apply writes it before staging anything: first the
// list of every temporary file and folder it will stage with its final path,
// and of every file it will delete; then, once everything is staged, a
// commit line that seals that list, and an fsync. Only then does it rename
// and delete, and it removes the journal when done.
//
// Recover, run before the folder is next read, finishes what a journal
// describes: a sealed journal is carried out again (every staged file is
// complete, so the change rolls forward), an unsealed one is undone (the
// temporaries it lists are removed, the folder holds the old fleet).
const JournalName = ".fleetwright-journal"

const journalMagic = "fleetwright journal 1\n"

// journalWords names the journal in messages, in the user's words.
const journalWords = "the fleet folder's record of an unfinished change (" + JournalName + ")"

// journal is the journal of one Apply.
type journal struct {
	f    *os.File
	body []byte // what was written before the commit line
}

// beginJournal writes the list of renames (temporary → final) and
// deletions, paths relative to root, to root's journal, unsealed.
func beginJournal(root string, renames [][2]string, deletes []string) (*journal, error) {
	var b bytes.Buffer
	b.WriteString(journalMagic)
	for _, r := range renames {
		fmt.Fprintf(&b, "r %s %s\n", strconv.Quote(r[0]), strconv.Quote(r[1]))
	}
	for _, d := range deletes {
		fmt.Fprintf(&b, "d %s\n", strconv.Quote(d))
	}
	f, err := os.OpenFile(filepath.Join(root, JournalName), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", journalWords, err)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing %s: %w", journalWords, err)
	}
	return &journal{f: f, body: b.Bytes()}, nil
}

// commitLine is the line that seals body.
func commitLine(body []byte) string {
	return fmt.Sprintf("commit %d %08x\n", len(body), crc32.ChecksumIEEE(body))
}

// commit seals the journal and makes it durable: from here on the change
// rolls forward.
func (j *journal) commit() error {
	_, err := j.f.WriteString(commitLine(j.body))
	if err == nil {
		err = j.f.Sync()
	}
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	j.f = nil
	if err != nil {
		return fmt.Errorf("writing %s: %w", journalWords, err)
	}
	return nil
}

// discard removes an unsealed journal whose temporaries are gone.
func (j *journal) discard(root string) {
	if j.f != nil {
		j.f.Close()
	}
	_ = os.Remove(filepath.Join(root, JournalName))
}

// done removes the journal of a change carried out.
func done(root string) error {
	if err := os.Remove(filepath.Join(root, JournalName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", journalWords, err)
	}
	return nil
}

// parsed is a journal read back.
type parsed struct {
	renames [][2]string
	deletes []string
	sealed  bool
}

// parseJournal reads a journal's text. A torn journal is not an error: it
// yields the complete lines before the tear, unsealed.
func parseJournal(data []byte) (*parsed, error) {
	p := &parsed{}
	if !bytes.HasPrefix(data, []byte(journalMagic)) {
		if bytes.HasPrefix([]byte(journalMagic), data) {
			return p, nil // torn in its first line
		}
		return nil, errors.New("not a fleetwright journal")
	}
	off := len(journalMagic)
	sc := bufio.NewScanner(bytes.NewReader(data[off:]))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		end := off + len(line) + 1
		if end > len(data) {
			break // the last line has no newline: torn
		}
		switch {
		case strings.HasPrefix(line, "r "):
			from, rest, ok := quoted(line[2:])
			if !ok || !strings.HasPrefix(rest, " ") {
				return p, nil
			}
			to, rest, ok := quoted(rest[1:])
			if !ok || rest != "" {
				return p, nil
			}
			p.renames = append(p.renames, [2]string{from, to})
		case strings.HasPrefix(line, "d "):
			d, rest, ok := quoted(line[2:])
			if !ok || rest != "" {
				return p, nil
			}
			p.deletes = append(p.deletes, d)
		case strings.HasPrefix(line, "commit "):
			p.sealed = line+"\n" == commitLine(data[:off]) && end == len(data)
			return p, nil
		default:
			return p, nil
		}
		off = end
	}
	return p, nil
}

func quoted(s string) (string, string, bool) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", false
	}
	u, err := strconv.Unquote(q)
	return u, s[len(q):], err == nil
}

// inside reports whether the slash path rel stays inside the root.
func inside(rel string) bool {
	return rel != "" && filepath.IsLocal(filepath.FromSlash(rel))
}

// Recover finishes a change of the folder root that was interrupted: it
// carries out a sealed journal, undoes an unsealed one, and removes it; the
// folder then holds the whole new or the whole old fleet, and no temporary
// file of the change. A folder without a journal costs one failed open and
// one stat.
func Recover(root string) error {
	root = filepath.Clean(root)
	// A first render stages the whole folder beside it, in one rename.
	stage := filepath.Join(filepath.Dir(root), tmpPrefix+filepath.Base(root))
	if _, err := os.Lstat(stage); err == nil {
		if err := os.RemoveAll(stage); err != nil {
			return fmt.Errorf("removing %s: %w", stage, err)
		}
	}
	data, err := os.ReadFile(filepath.Join(root, JournalName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", journalWords, err)
	}
	p, err := parseJournal(data)
	if err != nil {
		return fmt.Errorf("%s, %s: %w", filepath.Join(root, JournalName), journalWords, err)
	}
	for _, r := range p.renames {
		if !inside(r[0]) || !inside(r[1]) {
			return fmt.Errorf("%s, %s: a path outside the folder", filepath.Join(root, JournalName), journalWords)
		}
	}
	for _, d := range p.deletes {
		if !inside(d) {
			return fmt.Errorf("%s, %s: a path outside the folder", filepath.Join(root, JournalName), journalWords)
		}
	}
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	if !p.sealed {
		for _, r := range p.renames {
			if err := os.RemoveAll(abs(r[0])); err != nil {
				return fmt.Errorf("removing %s: %w", r[0], err)
			}
		}
		return done(root)
	}
	for _, r := range p.renames {
		err := os.Rename(abs(r[0]), abs(r[1]))
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Lstat(abs(r[1])); serr == nil {
				continue // renamed before the interruption
			}
		}
		if err != nil {
			return fmt.Errorf("renaming %s: %w", r[1], err)
		}
	}
	var dirs []string
	for _, d := range p.deletes {
		if err := os.Remove(abs(d)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", d, err)
		}
		dirs = append(dirs, filepath.Dir(abs(d)))
	}
	pruneEmpty(root, dirs)
	return done(root)
}

// pruneEmpty removes the folders dirs and their parents below root that
// are empty, deepest first.
func pruneEmpty(root string, dirs []string) {
	slices.SortFunc(dirs, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	dirs = slices.Compact(dirs)
	for _, d := range dirs {
		for d != root && strings.HasPrefix(d, root) {
			if err := os.Remove(d); err != nil {
				break // not empty
			}
			d = filepath.Dir(d)
		}
	}
}
