// Command capi-render runs Cluster API's own code on a KubeadmControlPlane (v1beta2) and prints the
// kubeadm ClusterConfiguration that Cluster API's kubeadm bootstrap provider writes onto each
// control-plane machine for it, so that kubeadm can render kube-controller-manager's static Pod
// manifest from it (test/unit/cutover.test.ts).
//
//	capi-render KCP.yaml [OLD-KCP.yaml]
//
// Steps, each Cluster API v1.14.2's code:
//   - strict decoding into controlplanev1.KubeadmControlPlane (an unknown or misspelt field fails);
//   - the KubeadmControlPlane admission webhook: Default, then ValidateCreate, and with OLD-KCP.yaml
//     ValidateUpdate from it (is the change allowed on a running control plane);
//   - the conversion of spec.kubeadmConfigSpec.clusterConfiguration into kubeadm's own API for
//     spec.version (bootstrap/kubeadm/pkg/types MarshalClusterConfigurationForVersion), which is
//     what the bootstrap provider puts in the machine's kubeadm config file.
//
// Exit codes: 0 printed, 1 rejected (the reason on stderr), 2 usage.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	kubeadmtypes "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstream"
	kcpadmission "sigs.k8s.io/cluster-api/controlplane/kubeadm/webhooks/admission"
)

func main() {
	if len(os.Args) < 2 || len(os.Args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: capi-render KCP.yaml [OLD-KCP.yaml]")
		os.Exit(2)
	}
	kcp, err := load(os.Args[1])
	if err != nil {
		fail(err)
	}
	webhook := &kcpadmission.KubeadmControlPlane{}
	ctx := context.Background()
	if err := webhook.Default(ctx, kcp); err != nil {
		fail(fmt.Errorf("defaulting webhook: %w", err))
	}
	if _, err := webhook.ValidateCreate(ctx, kcp); err != nil {
		fail(fmt.Errorf("validating webhook (create): %w", err))
	}
	if len(os.Args) == 3 {
		old, err := load(os.Args[2])
		if err != nil {
			fail(err)
		}
		if err := webhook.Default(ctx, old); err != nil {
			fail(fmt.Errorf("defaulting webhook (old object): %w", err))
		}
		if _, err := webhook.ValidateUpdate(ctx, old, kcp); err != nil {
			fail(fmt.Errorf("validating webhook (update): %w", err))
		}
	}
	version, err := semver.ParseTolerant(kcp.Spec.Version)
	if err != nil {
		fail(fmt.Errorf("spec.version %q: %w", kcp.Spec.Version, err))
	}
	// What the bootstrap provider takes from the Cluster object; the name is the KCP's here.
	clusterName := kcp.Name
	kubernetesVersion := kcp.Spec.Version
	text, err := kubeadmtypes.MarshalClusterConfigurationForVersion(&kcp.Spec.KubeadmConfigSpec.ClusterConfiguration, version, &upstream.AdditionalData{
		KubernetesVersion: &kubernetesVersion,
		ClusterName:       &clusterName,
	})
	if err != nil {
		fail(fmt.Errorf("conversion to kubeadm's API for %s: %w", kcp.Spec.Version, err))
	}
	fmt.Print(text)
}

// load decodes one KubeadmControlPlane strictly (unknown fields are errors, as with kubectl's
// --validate=strict against the CRD).
func load(path string) (*controlplanev1.KubeadmControlPlane, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := controlplanev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	codecs := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
	obj, _, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	kcp, ok := obj.(*controlplanev1.KubeadmControlPlane)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, not a KubeadmControlPlane", path, obj)
	}
	return kcp, nil
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "capi-render: %v\n", err)
	os.Exit(1)
}
