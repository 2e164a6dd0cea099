// Package build turns an app component's sources into a pushed, pinned
// container image.
//
// [Local] runs a Dockerfile without a container daemon. It supports FROM
// (registry images, scratch, earlier stages, --platform), COPY and ADD of
// local files and of other stages or images, RUN, and the instructions
// that only set image configuration: ENV, ARG, WORKDIR, USER,
// EXPOSE, LABEL, ENTRYPOINT, CMD, SHELL, VOLUME, STOPSIGNAL, HEALTHCHECK,
// ONBUILD and MAINTAINER. Dockerfiles are parsed by BuildKit's parser, and
// variables are expanded by BuildKit's shell lexer. When a base is a
// multi-platform index, Local builds every requested platform (default
// linux/amd64 and linux/arm64) and pushes an index; an image built from
// scratch gets the requested platforms too. If exactly one platform is built,
// it pushes a single image instead of an index. Layers are reproducible:
// entries are sorted, every entry has one modification time (the caller's
// SOURCE_DATE_EPOCH, else 0), and the owner is 0:0 unless --chown says
// otherwise. So the same inputs always give the same digest, for the same
// Go release (the gzip output comes from compress/flate).
//
// RUN (shell and exec form, heredocs, SHELL, with the stage's ENV, ARG,
// USER and WORKDIR) executes in an OCI runtime (runc, or crun): the stage's
// root filesystem is unpacked in a work folder and render writes a bundle
// for it (runtime-spec types) with the hardening Docker applies by default:
// a user namespace always (container root is an unprivileged host id, also
// when render runs as root), Docker's default capabilities and seccomp
// profile, no_new_privs, masked and read-only /proc and /sys paths,
// nosuid/nodev mounts, a network namespace with only loopback, and as root
// a cgroup with the memory, pids and CPU limits of [Limits]. The runtime
// creates and starts the container, whose pid 1 is the builder's own
// static executable (package sandboxinit) running the command as its
// child. Its layer is the
// difference of the tree before and after: added and changed files
// (content, mode and owner, not times), whiteouts, opaque directories,
// sorted, with SOURCE_DATE_EPOCH times; a layer that holds the value of a
// secret the RUN mounted, plain or encoded, fails the build
// ([*SecretLeakError]). Bind mount sources follow links only inside the
// build context. RUN layers are cached in the registry beside the image
// (tag [CacheTag]), keyed by the layers below, the command, its
// environment and its mounts' sources. See docs/build.md.
//
// An instruction the local builder cannot execute (ADD of a URL or of a
// git repository, RUN --mount=type=ssh, ONBUILD triggers inherited from a
// base) fails with an [*UnsupportedError] naming its Dockerfile line, and
// so does RUN when an external builder is configured. Unused stages are
// not checked, just as BuildKit skips them.
//
// [External] runs a configured build command (docker buildx, kaniko, ...)
// and reads back the digest it pushed. [Fallback] uses it for Dockerfiles
// that Local cannot run. [Pack] hands buildpack builds to the pack CLI.
// [ContentAddressed] tags every image with a hash of its inputs
// ([ContentTag]) and skips any build whose tag the registry already has.
// [RunLevels] runs many builds in dependency order, with a bound on how many
// run at once. [New] puts these together.
//
// The build context and the Dockerfile must resolve inside Request.Root
// (the apps repository). A path that leaves it through ".." or a symbolic
// link is refused with [ErrOutsideRoot]. A COPY source must also stay inside
// the context. Symbolic links inside a copied directory are copied as links
// and are not followed.
//
// Limits, where Local differs from BuildKit:
//   - A destination without a trailing slash is a file, as Docker's
//     documentation says. Local does not check whether the base already
//     has a directory there.
//   - On a registry base, COPY adds no entries for missing parent
//     directories (the runtime creates them when it unpacks the layer), and
//     adds the destination directory only for --chown. On a scratch chain,
//     both are added with mode 0755 and owner 0:0.
//   - --chmod takes octal modes only. COPY --parents is refused.
//     HEALTHCHECK --start-interval is dropped, because the image config type
//     has no field for it.
//   - ADD unpacks tar, tar.gz and tar.bz2 archives. xz and zstd archives
//     are refused.
//   - Copying a single file from a stage reads layers from the top down and
//     stops at the file. Copying a directory or a wildcard reads the headers
//     of every layer of that stage's base.
//   - Context files and the layers made from them are held in memory.
//   - A reused image's Result.Platforms lists the platforms requested.
//     Local leaves out a platform that a single-platform base lacks when
//     the request named no platforms.
package build
