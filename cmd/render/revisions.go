package main

import "github.com/fleetwright/fleetwright/internal/gitrepo"

func gitTop(dir string) (top, rel string, ok bool) { return gitrepo.FindTop(dir) }
