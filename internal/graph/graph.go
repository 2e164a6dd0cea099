// Package graph orders the components of apps by their dependencies: a
// deterministic topological order (ties broken by name) and cycle reports
// that name the whole cycle.
package graph

import (
	"container/heap"
	"slices"
	"strings"
)

// Graph is a directed graph where an edge from A to B means A depends on B.
// The zero value is not usable; call New.
type Graph struct {
	deps  map[string]map[string]struct{}
	users map[string]map[string]struct{}
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{deps: map[string]map[string]struct{}{}, users: map[string]map[string]struct{}{}}
}

// AddNode adds id if it is not there yet.
func (g *Graph) AddNode(id string) {
	if _, ok := g.deps[id]; !ok {
		g.deps[id] = map[string]struct{}{}
		g.users[id] = map[string]struct{}{}
	}
}

// AddEdge records that from depends on to, adding both nodes.
func (g *Graph) AddEdge(from, to string) {
	g.AddNode(from)
	g.AddNode(to)
	g.deps[from][to] = struct{}{}
	g.users[to][from] = struct{}{}
}

// Len is the number of nodes.
func (g *Graph) Len() int { return len(g.deps) }

// Deps returns what id depends on, sorted.
func (g *Graph) Deps(id string) []string { return sortedKeys(g.deps[id]) }

// Users returns what depends on id, sorted.
func (g *Graph) Users(id string) []string { return sortedKeys(g.users[id]) }

func sortedKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// CycleError reports a dependency cycle.
type CycleError struct {
	// Cycle lists the nodes in dependency order, the first repeated last.
	Cycle []string
}

func (e *CycleError) Error() string { return "dependency cycle: " + strings.Join(e.Cycle, " -> ") }

// Order returns every node, each after all it depends on; among nodes that
// are ready at the same time the smallest name comes first. It fails with a
// *CycleError when the graph has a cycle.
func (g *Graph) Order() ([]string, error) {
	if _, err := g.Levels(); err != nil {
		return nil, err
	}
	pending := make(map[string]int, len(g.deps))
	ready := &stringHeap{}
	for id, d := range g.deps {
		pending[id] = len(d)
		if len(d) == 0 {
			*ready = append(*ready, id)
		}
	}
	heap.Init(ready)
	out := make([]string, 0, len(g.deps))
	for ready.Len() > 0 {
		id := heap.Pop(ready).(string)
		out = append(out, id)
		for u := range g.users[id] {
			pending[u]--
			if pending[u] == 0 {
				heap.Push(ready, u)
			}
		}
	}
	return out, nil
}

// Levels groups the nodes into waves: each wave depends only on earlier
// waves, so the nodes of a wave can be worked on in parallel. Each wave is
// sorted by name.
func (g *Graph) Levels() ([][]string, error) {
	pending := make(map[string]int, len(g.deps))
	var wave []string
	for id, d := range g.deps {
		pending[id] = len(d)
		if len(d) == 0 {
			wave = append(wave, id)
		}
	}
	var levels [][]string
	done := 0
	for len(wave) > 0 {
		slices.Sort(wave)
		levels = append(levels, wave)
		done += len(wave)
		var next []string
		for _, id := range wave {
			for u := range g.users[id] {
				pending[u]--
				if pending[u] == 0 {
					next = append(next, u)
				}
			}
		}
		wave = next
	}
	if done < len(g.deps) {
		return nil, &CycleError{Cycle: g.findCycle(pending)}
	}
	return levels, nil
}

// findCycle walks from the smallest node left over, always to its smallest
// left-over dependency, until a node repeats.
func (g *Graph) findCycle(pending map[string]int) []string {
	var left []string
	for id, n := range pending {
		if n > 0 {
			left = append(left, id)
		}
	}
	slices.Sort(left)
	// A node that is left over may only be waiting on a cycle; walk until a
	// repeat, then keep the loop itself.
	seen := map[string]int{}
	var walk []string
	cur := left[0]
	for {
		if i, ok := seen[cur]; ok {
			cycle := append(slices.Clone(walk[i:]), cur)
			return rotateSmallest(cycle)
		}
		seen[cur] = len(walk)
		walk = append(walk, cur)
		next := ""
		for _, d := range g.Deps(cur) {
			if pending[d] > 0 {
				next = d
				break
			}
		}
		if next == "" {
			return walk // cannot happen: a left-over node waits on one
		}
		cur = next
	}
}

// rotateSmallest starts the cycle (last element repeats the first) at its
// smallest node, so the same cycle always prints the same way.
func rotateSmallest(c []string) []string {
	loop := c[:len(c)-1]
	i := slices.Index(loop, slices.Min(loop))
	out := append(slices.Clone(loop[i:]), loop[:i]...)
	return append(out, out[0])
}

type stringHeap []string

func (h stringHeap) Len() int           { return len(h) }
func (h stringHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h stringHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *stringHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *stringHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
