//go:build !linux

package build

import "errors"

func namespacesOnce() error { return errors.New("not Linux") }
