// Package validate holds the checks of the specs beyond their schema, a
// file per part of the spec (workloads, ports and probes, volumes, routes,
// hosts, secrets, patches, environments, policy), and NewLoader, the loader
// that makes them. Each check adds its problems at the field they are
// about; testdata/invalid holds a case of every refusal and the problems it
// prints.
//
// What the checks of a workload's fields guarantee, generate relies on:
// port and ports, health_check and probes are not both set; a probe has one
// handler, on a port its container declares; volume names are unique and a
// path is mounted once; $(NAME) names an earlier env entry; files have one
// of content and from; patches parse; job and cronjob fields are only on
// their types.
package validate
