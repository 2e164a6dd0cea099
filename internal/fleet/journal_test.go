package fleet

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/golden"
)

var testManaged = []string{"apps/c", "projects"}

// oldFleet and newFleet are a fleet of n apps before and after a change
// that updates, adds (in new folders) and deletes files and whole folders.
func oldFleet(n int) map[string]string {
	m := map[string]string{"README.md": "not generated\n"}
	for i := range n {
		m[fmt.Sprintf("apps/c/a%04d/deploy.yaml", i)] = fmt.Sprintf("%sold deploy %d\n", h, i)
		m[fmt.Sprintf("apps/c/a%04d/svc.yaml", i)] = fmt.Sprintf("%sold svc %d\n", h, i)
		if i%5 == 0 {
			m[fmt.Sprintf("projects/p%04d.yaml", i)] = fmt.Sprintf("%sproject %d\n", h, i)
		}
	}
	return m
}

func newFleet(n int) map[string]string {
	m := map[string]string{"README.md": "not generated\n"}
	for i := range n {
		if i%10 == 9 {
			continue // the app is gone, its folder too
		}
		m[fmt.Sprintf("apps/c/a%04d/deploy.yaml", i)] = fmt.Sprintf("%snew deploy %d\n", h, i)
		if i%2 == 0 {
			m[fmt.Sprintf("apps/c/a%04d/svc.yaml", i)] = fmt.Sprintf("%sold svc %d\n", h, i)
		}
		if i%5 == 0 {
			m[fmt.Sprintf("projects/p%04d.yaml", i)] = fmt.Sprintf("%sproject %d\n", h, i)
		}
	}
	for i := range n / 5 {
		m[fmt.Sprintf("apps/c/b%04d/deploy.yaml", i)] = fmt.Sprintf("%sadded %d\n", h, i)
	}
	return m
}

func desiredOf(m map[string]string) map[string][]byte {
	d := map[string][]byte{}
	for p, c := range m {
		if p != "README.md" {
			d[p] = []byte(c)
		}
	}
	return d
}

// stopAt stops at the nth time (from 1) apply reaches step.
func stopAt(step string, nth int) func(string) bool {
	seen := 0
	return func(s string) bool {
		if s == step {
			seen++
			return seen == nth
		}
		return false
	}
}

func TestRecoverFinishesOrUndoesAnInterruptedApply(t *testing.T) {
	t.Parallel()
	const n = 40
	old, new := oldFleet(n), newFleet(n)
	tests := []struct {
		name string
		stop func(string) bool
		// tear cuts this many bytes off the end of the journal.
		tear int
		want map[string]string
	}{
		{name: "staged, journal unsealed", stop: stopAt("staged", 1), want: old},
		{name: "sealed", stop: stopAt("sealed", 1), want: new},
		{name: "commit line torn", stop: stopAt("sealed", 1), tear: 1, want: old},
		{name: "commit line half torn", stop: stopAt("sealed", 1), tear: 10, want: old},
		{name: "first rename", stop: stopAt("renamed", 1), want: new},
		{name: "middle rename", stop: stopAt("renamed", 30), want: new},
		{name: "first deletion", stop: stopAt("deleted", 1), want: new},
		{name: "middle deletion", stop: stopAt("deleted", 20), want: new},
		{name: "not stopped", stop: func(string) bool { return false }, want: new},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			golden.WriteFiles(t, root, old)
			plan, err := Compute(root, desiredOf(new), testManaged)
			if err != nil {
				t.Fatal(err)
			}
			err = applyStopping(root, plan, tt.stop)
			if tt.tear > 0 {
				j := filepath.Join(root, JournalName)
				st, err := os.Stat(j)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(j, st.Size()-int64(tt.tear)); err != nil {
					t.Fatal(err)
				}
			}
			if err != nil && err != errStopped {
				t.Fatal(err)
			}
			if err := Recover(root); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, golden.ReadFiles(t, root)); d != "" {
				t.Errorf("after recovery (-want +got):\n%s", d)
			}
			again, err := Compute(root, desiredOf(tt.want), testManaged)
			if err != nil || !again.Empty() {
				t.Errorf("the recovered folder is not the fleet: %+v %v", again, err)
			}
		})
	}
}

// TestRecoverRemovesAFirstRendersStaging: a first render stages the whole
// folder beside it, without a journal; killed before its one rename, it
// leaves no folder and no staging.
func TestRecoverRemovesAFirstRendersStaging(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "fleet")
	plan, err := Compute(root, desiredOf(newFleet(10)), testManaged)
	if err != nil {
		t.Fatal(err)
	}
	if err := applyStopping(root, plan, stopAt("staged", 1)); err != errStopped {
		t.Fatal(err)
	}
	if err := Recover(root); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Dir(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestParseJournal(t *testing.T) {
	t.Parallel()
	body := journalMagic + "r \"a/.fleetwright-tmp-x\" \"a/x\"\nr \"b c\" \"d\\ne\"\nd \"gone\"\n"
	sealed := body + commitLine([]byte(body))
	full := &parsed{renames: [][2]string{{"a/.fleetwright-tmp-x", "a/x"}, {"b c", "d\ne"}}, deletes: []string{"gone"}}
	tests := []struct {
		name, text string
		want       *parsed
	}{
		{"empty", "", &parsed{}},
		{"torn magic", journalMagic[:5], &parsed{}},
		{"unsealed", body, full},
		{"sealed", sealed, &parsed{renames: full.renames, deletes: full.deletes, sealed: true}},
		{"torn commit", sealed[:len(sealed)-1], full},
		{"wrong checksum", body + "commit 1 00000000\n", full},
		{"torn line", body[:len(body)-3], &parsed{renames: full.renames}},
		{"torn quote", body[:len(journalMagic)+8], &parsed{}},
		{"after commit", sealed + "d \"x\"\n", full},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseJournal([]byte(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(parsed{})); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if _, err := parseJournal([]byte("something else\n")); err == nil {
		t.Error("a file that is no journal parsed")
	}
}

func TestRecoverRefusesPathsOutsideTheFolder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	body := journalMagic + "d \"../outside\"\n"
	golden.WriteFiles(t, root, map[string]string{JournalName: body + commitLine([]byte(body))})
	if err := Recover(root); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("got %v, want an error", err)
	}
}

func TestApplyLeavesNoJournal(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	golden.WriteFiles(t, root, oldFleet(5))
	plan, err := Compute(root, desiredOf(newFleet(5)), testManaged)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(root, plan); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(newFleet(5), golden.ReadFiles(t, root)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

const killChildEnv = "FLEETWRIGHT_TEST_KILL_APPLY"

const killApps = 2000

// TestKilledApplyLeavesOldOrNewFleet runs Apply of a large change in a
// child process, kills it at a random moment of the write, and checks that
// after Recover the folder holds the whole old or the whole new fleet.
func TestKilledApplyLeavesOldOrNewFleet(t *testing.T) {
	if dir := os.Getenv(killChildEnv); dir != "" {
		killChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("kills 20 child processes")
	}
	t.Parallel()
	old, new := oldFleet(killApps), newFleet(killApps)
	// run applies the change in a child process and kills it after delay
	// from the start of Apply, or, afterSeal, from the journal's seal (a
	// negative delay lets it finish). It returns whether the child was
	// killed before it finished, and how long staging and the rest took.
	run := func(root string, delay time.Duration, afterSeal bool) (killed bool, staging, rest time.Duration) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledApplyLeavesOldOrNewFleet$", "-test.count=1")
		cmd.Env = append(os.Environ(), killChildEnv+"="+root)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		r := bufio.NewReader(out)
		if line, err := r.ReadString('\n'); line != "applying\n" {
			cmd.Process.Kill()
			t.Fatalf("child said %q, %v", line, err)
		}
		start := time.Now()
		if delay >= 0 && !afterSeal {
			time.Sleep(delay)
			cmd.Process.Signal(syscall.SIGKILL)
		}
		line, _ := r.ReadString('\n')
		staging = time.Since(start)
		if line == "sealed\n" {
			if delay >= 0 && afterSeal {
				time.Sleep(delay)
				cmd.Process.Signal(syscall.SIGKILL)
			}
			line, _ = r.ReadString('\n')
		}
		rest = time.Since(start) - staging
		if delay < 0 && line != "done\n" {
			t.Fatalf("child: said %q", line)
		}
		return line != "done\n", staging, rest
	}
	// How long the write takes, to kill within it.
	root := filepath.Join(t.TempDir(), "fleet")
	golden.WriteFiles(t, root, old)
	_, staging, commit := run(root, -1, false)
	if d := cmp.Diff(new, golden.ReadFiles(t, root)); d != "" {
		t.Fatalf("an uninterrupted apply (-want +got):\n%s", d)
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("staging takes %v, renaming and deleting %v; seed %d", staging, commit, seed)
	var olds, news int
	for i := range 20 {
		root := filepath.Join(t.TempDir(), "fleet")
		golden.WriteFiles(t, root, old)
		// Half the kills fall while staging, half while renaming.
		afterSeal := i%2 == 1
		window := staging
		if afterSeal {
			window = commit
		}
		delay := time.Duration(rng.Int64N(int64(window) + 1))
		killed, _, _ := run(root, delay, afterSeal)
		if err := Recover(root); err != nil {
			t.Fatalf("iteration %d (killed after %v): %v", i, delay, err)
		}
		got := golden.ReadFiles(t, root)
		switch {
		case cmp.Equal(got, old):
			olds++
		case cmp.Equal(got, new):
			news++
		default:
			t.Fatalf("iteration %d (killed %v, %v after the seal %v): neither the old nor the new fleet (-new +got):\n%s",
				i, killed, delay, afterSeal, cmp.Diff(new, got))
		}
	}
	t.Logf("old fleet %d times, new fleet %d times", olds, news)
	if olds == 0 || news == 0 {
		t.Errorf("the kills did not land on both sides of the seal")
	}
}

// killChild is the child process: it applies the change to root.
func killChild(root string) {
	plan, err := Compute(root, desiredOf(newFleet(killApps)), testManaged)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("applying")
	sealed := func(step string) bool {
		if step == "sealed" {
			fmt.Println("sealed")
		}
		return false
	}
	if err := applyStopping(root, plan, sealed); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("done")
	os.Exit(0)
}
