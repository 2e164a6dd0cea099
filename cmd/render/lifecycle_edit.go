package main

import (
	"context"
	"strconv"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/lifecycle"
)

func runPauseResume(ctx context.Context, args []string, io stdio, pause bool) error {
	verb, edit := "resume", lifecycle.Resume
	if pause {
		verb, edit = "pause", lifecycle.Pause
	}
	fs := newFlags("render "+verb, io)
	f := addEditFlags(fs, false)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("usage: render %s APP [--commit]", verb)
	}
	o := lifecycleOptions(io, f.repo, pos[0])
	ch, err := edit(ctx, o)
	return f.finish(ctx, o, ch, err, io)
}

func runScale(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render scale", io)
	f := addEditFlags(fs, false)
	minR := fs.Int("min", -1, "autoscaling lower bound (min_replicas)")
	maxR := fs.Int("max", -1, "autoscaling upper bound (max_replicas)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	bounds := *minR >= 0 || *maxR >= 0
	switch {
	case len(pos) == 3 && !bounds, len(pos) == 2 && bounds:
	default:
		return cli.Usagef("usage: render scale APP COMPONENT REPLICAS, or render scale APP COMPONENT --min N --max N")
	}
	s := lifecycle.Scaling{Component: pos[1]}
	if len(pos) == 3 {
		n, err := strconv.Atoi(pos[2])
		if err != nil || n < 0 {
			return cli.Usagef("REPLICAS must be a whole number ≥ 0, got %q", pos[2])
		}
		s.Replicas = &n
	}
	if *minR >= 0 {
		s.Min = minR
	}
	if *maxR >= 0 {
		s.Max = maxR
	}
	o := lifecycleOptions(io, f.repo, pos[0])
	ch, err := lifecycle.Scale(ctx, o, s)
	return f.finish(ctx, o, ch, err, io)
}

func runDelete(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render delete", io)
	f := addEditFlags(fs, false)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("usage: render delete APP [--commit]")
	}
	o := lifecycleOptions(io, f.repo, pos[0])
	ch, err := lifecycle.Delete(ctx, o)
	return f.finish(ctx, o, ch, err, io)
}

func runNew(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render new", io)
	f := addEditFlags(fs, false)
	var n lifecycle.NewApp
	fs.StringVar(&n.Project, "project", "", "project of the app (default: the only project under apps/)")
	fs.StringVar(&n.Image, "image", "", "image to run, such as myorg/my-api:v1.2.0")
	fs.StringVar(&n.Dockerfile, "dockerfile", "", "build the image from this Dockerfile (relative to the app's folder) instead of --image")
	fs.IntVar(&n.Port, "port", 0, "port the container listens on")
	replicas := fs.Int("replicas", -1, "replicas (default 1)")
	fs.BoolVar(&n.Ingress, "ingress", false, "expose the workload over HTTPS (needs --port)")
	fs.StringVar(&n.Host, "host", "", "ingress host name (implies --ingress; default <app>-<project>.<apps_domain>)")
	fs.StringVar(&n.Component, "component", "web", "name of the workload component")
	fs.BoolVar(&n.JSON, "json", false, "write app.json instead of app.yaml")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("usage: render new NAME [--project P] [--image IMG | --dockerfile PATH] [--port N] [--replicas N] [--ingress] [--host H]")
	}
	n.Name = pos[0]
	switch {
	case (n.Image == "") == (n.Dockerfile == ""):
		return cli.Usagef("give one of --image or --dockerfile")
	case (n.Host != "" || n.Ingress) && n.Port == 0:
		return cli.Usagef("an ingress needs --port")
	}
	if *replicas >= 0 {
		n.Replicas = replicas
	}
	o := lifecycleOptions(io, f.repo, "")
	ch, err := lifecycle.New(ctx, o, n)
	return f.finish(ctx, o, ch, err, io)
}
