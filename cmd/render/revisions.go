package main

import rev "github.com/fleetwright/fleetwright/internal/revision"

func gitTop(dir string) (top, rel string, ok bool) { return rev.GitTop(dir) }
