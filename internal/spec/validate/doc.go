// Package validate holds the checks of the specs beyond their schema, a
// file per part of the spec (workloads, ports and probes, volumes, routes,
// hosts, secrets, patches, environments, policy), and NewLoader, the loader
// that makes them. Each check adds its problems at the field they are
// about; testdata/invalid holds a case of every refusal and the problems it
// prints.
package validate
