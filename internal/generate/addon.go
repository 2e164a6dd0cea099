package generate

import (
	"encoding/json"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

func (r *renderer) addon(a *load.LoadedApp, c *spec.Component) ([]object, error) {
	s := c.AddonSpec
	name := objectName(a, c.Name)
	lbls := labels(a, c.Name)
	repo := &sourcev1.HelmRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: "source.toolkit.fluxcd.io/v1", Kind: "HelmRepository"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.Project, Labels: lbls},
		Spec: sourcev1.HelmRepositorySpec{
			URL:      s.Chart.Repo,
			Interval: metav1.Duration{Duration: time.Hour},
		},
	}
	if strings.HasPrefix(s.Chart.Repo, "oci://") {
		repo.Spec.Type = sourcev1.HelmRepositoryTypeOCI
	}
	values, err := json.Marshal(addonInput(a, c).Values)
	if err != nil {
		return nil, err
	}
	retries := 3
	rel := &helmv2.HelmRelease{
		TypeMeta: metav1.TypeMeta{APIVersion: "helm.toolkit.fluxcd.io/v2", Kind: "HelmRelease"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: a.Project, Labels: lbls,
			Annotations: componentEventAnnotations(a, c.Name),
			Finalizers:  fluxFinalizers(),
		},
		Spec: helmv2.HelmReleaseSpec{
			ReleaseName: name,
			Interval:    metav1.Duration{Duration: 10 * time.Minute},
			Timeout:     &metav1.Duration{Duration: a.Timeout},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart:     s.Chart.Name,
				Version:   s.Chart.Version,
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: name},
				Interval:  &metav1.Duration{Duration: time.Hour},
			}},
			Install: &helmv2.Install{Remediation: &helmv2.InstallRemediation{Retries: retries}},
			Upgrade: &helmv2.Upgrade{
				CleanupOnFail: true,
				Remediation:   &helmv2.UpgradeRemediation{Retries: retries, RemediateLastFailure: new(true)},
			},
			Values:             &apiextensionsv1.JSON{Raw: values},
			ServiceAccountName: r.releaseAccount(a.Cluster),
		},
	}
	return []object{{"HelmRepository", name, repo}, {"HelmRelease", name, rel}}, nil
}

// releaseAccount is the account helm-controller installs a project's
// charts as: the project's service account on a cluster Flux runs in (see
// tenancy.go), the cluster's service_account on one it reaches through a
// kubeconfig.
func (r *renderer) releaseAccount(cluster string) string {
	cl := r.opts.Platform.ClusterByName(cluster)
	if cl != nil && cl.KubeconfigSecret != nil {
		return cl.ServiceAccount
	}
	return layout.ProjectServiceAccount
}
