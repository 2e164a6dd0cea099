package testenv

import (
	"io"
	"log/slog"
	"os"
	"time"
)

// Option configures Start.
type Option func(*config)

type config struct {
	binDir       string
	getenv       func(string) string
	logger       *slog.Logger
	output       io.Writer
	startTimeout time.Duration
}

func defaultConfig() config {
	return config{
		getenv:       os.Getenv,
		logger:       slog.New(slog.DiscardHandler),
		startTimeout: time.Minute,
	}
}

// WithBinDir runs the kube-apiserver and etcd binaries found in dir, instead
// of looking them up through the environment (see BinDir).
func WithBinDir(dir string) Option {
	return func(c *config) { c.binDir = dir }
}

// WithGetenv sets how environment variables are read when the binaries'
// folder is looked up (see BinDir). The default is os.Getenv.
func WithGetenv(getenv func(string) string) Option {
	return func(c *config) {
		if getenv != nil {
			c.getenv = getenv
		}
	}
}

// WithLogger sets the logger for progress messages. The default discards them.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithControlPlaneOutput copies the stdout and stderr of etcd and
// kube-apiserver to w, which helps when the server misbehaves.
func WithControlPlaneOutput(w io.Writer) Option {
	return func(c *config) { c.output = w }
}

// WithStartTimeout bounds how long etcd and kube-apiserver may each take to
// become ready. The default is one minute.
func WithStartTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.startTimeout = d
		}
	}
}
