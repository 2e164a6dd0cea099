package cli

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Command describes one command of a program for its help: `PROG COMMAND
// --help`, `PROG help COMMAND`, and the shell completion scripts.
type Command struct {
	// Name is the command as typed after the program's name ("validate");
	// empty for the program's own flags.
	Name string
	// Args shows the positional arguments ("[PATH...]").
	Args string
	// Summary is one line: what the command does.
	Summary string
	// Long, when set, is more text after the summary.
	Long string
	// Examples are command lines, each with an optional comment after "  # ".
	Examples []string
}

// Help is what a program shows for --help: its name, its commands, and how
// it writes flags.
type Help struct {
	// Program is the program's name ("render").
	Program string
	// Dash is what flags are written with in help: "--" (default) or "-".
	Dash string
	// Commands are the program's commands, the program's own flags first
	// (Name "") when it has any besides its commands'.
	Commands []Command
	// Overview, when set, prints the help of the program without a
	// command (Name ""), with its flags fs, instead of Write.
	Overview func(w io.Writer, fs *flag.FlagSet)
}

// Lookup returns the command named name.
func (h *Help) Lookup(name string) (Command, bool) {
	i := slices.IndexFunc(h.Commands, func(c Command) bool { return c.Name == name })
	if i < 0 {
		return Command{}, false
	}
	return h.Commands[i], true
}

// Names are the commands' names, those with one.
func (h *Help) Names() []string {
	var out []string
	for _, c := range h.Commands {
		if c.Name != "" {
			out = append(out, c.Name)
		}
	}
	return out
}

func (h *Help) dash() string {
	if h.Dash == "" {
		return "--"
	}
	return h.Dash
}

func (h *Help) title(c Command) string {
	if c.Name == "" {
		return h.Program
	}
	return h.Program + " " + c.Name
}

// FlagSet returns the flag set of command name. Its usage prints the
// command's help, flags and examples to out on -h or --help (the caller
// then exits 0, see ParseFlags); after a wrong flag, whose error the flag
// package prints to errw, it prints one line to errw saying where help is.
// When onHelp is set it receives the flag set instead (completion scripts
// read the flags that way) and nothing is printed.
func (h *Help) FlagSet(name string, out, errw io.Writer, onHelp func(*flag.FlagSet)) *flag.FlagSet {
	c, ok := h.Lookup(name)
	if !ok {
		c = Command{Name: name}
	}
	fs := flag.NewFlagSet(h.title(c), flag.ContinueOnError)
	tw := &trackWriter{w: errw}
	fs.SetOutput(tw)
	fs.Usage = func() {
		switch {
		case tw.wrote:
			// The flag package printed an error: point to the help.
			fmt.Fprintf(errw, "Run '%s %shelp' for its flags and examples.\n", h.title(c), h.dash())
		case onHelp != nil:
			onHelp(fs)
		case c.Name == "" && h.Overview != nil:
			h.Overview(out, fs)
		default:
			h.Write(out, c, fs)
		}
	}
	return fs
}

// trackWriter remembers whether anything was written through it.
type trackWriter struct {
	w     io.Writer
	wrote bool
}

func (t *trackWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.w.Write(b)
}

// Write prints command c's help with the flags of fs (nil: none).
func (h *Help) Write(w io.Writer, c Command, fs *flag.FlagSet) {
	usage := h.title(c)
	if fs != nil && hasFlags(fs) {
		usage += " [flags]"
	}
	if c.Args != "" {
		usage += " " + c.Args
	}
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s\n", c.Summary, usage)
	if c.Long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.Long, "\n"))
	}
	if fs != nil && hasFlags(fs) {
		fmt.Fprintf(w, "\nFlags:\n")
		h.WriteFlags(w, fs)
	}
	if len(c.Examples) > 0 {
		fmt.Fprintf(w, "\nExamples:\n")
		for _, e := range c.Examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// WriteFlags prints fs's flags one a line, sorted, as
//
//	--name TYPE   usage (default X)
//
// A default is shown only when it is not the type's zero value and the
// usage does not say its own ("(default: …)").
func (h *Help) WriteFlags(w io.Writer, fs *flag.FlagSet) {
	type row struct{ left, usage string }
	var rows []row
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		left := h.dash() + f.Name
		if typ != "" {
			left += " " + typ
		}
		if d := defaultOf(f); d != "" && !strings.Contains(usage, "(default") {
			usage += " (default " + d + ")"
		}
		rows = append(rows, row{left, usage})
		width = max(width, len(left))
	})
	for _, r := range rows {
		fmt.Fprintf(w, "  %-*s   %s\n", width, r.left, r.usage)
	}
}

// defaultOf is f's default as help shows it, or "" for the zero value of
// its type.
func defaultOf(f *flag.Flag) string {
	if f.DefValue == "" {
		return ""
	}
	// The zero value of the flag's type, as the flag package finds it.
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	if zv, ok := z.Interface().(flag.Value); ok && safeString(zv) == f.DefValue {
		return ""
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch v := g.Get().(type) {
		case string:
			return fmt.Sprintf("%q", f.DefValue)
		case time.Duration:
			return shortDuration(v)
		}
	}
	return f.DefValue
}

// safeString is v.String(), or "" when a zero value's String panics.
func safeString(v flag.Value) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return v.String()
}

// shortDuration writes d without its zero tail: 1h, not 1h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
