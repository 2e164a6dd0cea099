package graph

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		edges  [][2]string
		nodes  []string
		want   []string
		levels [][]string
		cycle  []string
	}{
		{name: "ties by name", nodes: []string{"c", "b", "a"}, want: []string{"a", "b", "c"}, levels: [][]string{{"a", "b", "c"}}},
		{name: "chain", edges: [][2]string{{"api", "postgres"}, {"worker", "api"}}, want: []string{"postgres", "api", "worker"},
			levels: [][]string{{"postgres"}, {"api"}, {"worker"}}},
		{name: "diamond", edges: [][2]string{{"d", "b"}, {"d", "c"}, {"b", "a"}, {"c", "a"}}, nodes: []string{"e"},
			want: []string{"a", "b", "c", "d", "e"}, levels: [][]string{{"a", "e"}, {"b", "c"}, {"d"}}},
		{name: "ready node smaller than later ones", edges: [][2]string{{"a", "z"}}, nodes: []string{"m"},
			want: []string{"m", "z", "a"}, levels: [][]string{{"m", "z"}, {"a"}}},
		{name: "two-cycle", edges: [][2]string{{"api", "worker"}, {"worker", "api"}}, cycle: []string{"api", "worker", "api"}},
		{name: "cycle behind a tail", edges: [][2]string{{"a", "x"}, {"x", "y"}, {"y", "z"}, {"z", "x"}},
			cycle: []string{"x", "y", "z", "x"}},
		{name: "self", edges: [][2]string{{"a", "a"}}, cycle: []string{"a", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := New()
			for _, n := range tt.nodes {
				g.AddNode(n)
			}
			for _, e := range tt.edges {
				g.AddEdge(e[0], e[1])
			}
			got, err := g.Order()
			levels, lerr := g.Levels()
			if tt.cycle != nil {
				var ce *CycleError
				if !errors.As(err, &ce) || !errors.As(lerr, &ce) {
					t.Fatalf("got %v, %v; want a cycle", err, lerr)
				}
				if d := cmp.Diff(tt.cycle, ce.Cycle); d != "" {
					t.Errorf("cycle (-want +got):\n%s", d)
				}
				return
			}
			if err != nil || lerr != nil {
				t.Fatal(err, lerr)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("order (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.levels, levels); d != "" {
				t.Errorf("levels (-want +got):\n%s", d)
			}
		})
	}
}

func TestCycleMessage(t *testing.T) {
	t.Parallel()
	g := New()
	g.AddEdge("api", "worker")
	g.AddEdge("worker", "api")
	_, err := g.Order()
	if got, want := fmt.Sprint(err), "dependency cycle: api -> worker -> api"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func BenchmarkOrder30k(b *testing.B) {
	g := New()
	for i := range 10_000 {
		a := fmt.Sprintf("p/app%05d/", i)
		g.AddEdge(a+"api", a+"db")
		g.AddEdge(a+"worker", a+"api")
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := g.Order(); err != nil {
			b.Fatal(err)
		}
	}
}
