package spec

import (
	"slices"
)

// SharedVolume returns the app-wide volume of that name, or nil.
func (s *App) SharedVolume(name string) *AppVolume {
	for i := range s.Volumes {
		if s.Volumes[i].Name == name {
			return &s.Volumes[i]
		}
	}
	return nil
}

// SharedVolumeOwner is the component whose objects hold the claim of an
// app-wide volume: of those that mount it, the first workload by name, else
// the first job or cronjob by name (a workload's pods use the claim as soon
// as it is applied, which binds it where binding waits for a consumer). It
// does not depend on the order of the components; "" when none mounts it.
func (s *App) SharedVolumeOwner(volume string) string {
	owner, ownerWorkload := "", false
	for i := range s.Components {
		c := &s.Components[i]
		if c.WorkloadSpec == nil || c.Type == TypeAddon {
			continue
		}
		isWorkload := c.Type == TypeWorkload
		better := owner == "" || (isWorkload && !ownerWorkload) || (isWorkload == ownerWorkload && c.Name < owner)
		if better && slices.ContainsFunc(c.WorkloadSpec.Volumes, func(v Volume) bool { return v.Shared == volume }) {
			owner, ownerWorkload = c.Name, isWorkload
		}
	}
	return owner
}

// RetainShared reports whether the claim of an app-wide volume outlives
// its removal from the fleet (retain, true unless set to false).
func (v *AppVolume) RetainShared() bool { return v.Retain == nil || *v.Retain }

// SharedClaimName is the name of the PersistentVolumeClaim of an app-wide
// volume: <app>-<volume>.
func SharedClaimName(app, volume string) string { return app + "-" + volume }
