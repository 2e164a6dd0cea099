//go:build !linux

package main

import "errors"

func canCreateNamespaces() error { return errors.New("RUN needs Linux") }
