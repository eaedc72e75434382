// Command monitoring-check decodes the Prometheus Operator objects the chart renders (ServiceMonitor,
// PrometheusRule) strictly into the operator's own Go types (monitoring.coreos.com/v1, from
// github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring at the version in go.mod),
// so a misspelt or misplaced field fails: kubeconform cannot check these kinds (the test API server
// does not serve the operator's CRDs; scripts/release/kubeconform.ts skips them).
//
//	monitoring-check FILE...   each FILE a YAML stream; documents of other kinds are skipped
//
// Prints one line per object checked. Exit codes: 0 all decoded, 1 a document failed, 2 usage.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: monitoring-check FILE...")
		os.Exit(2)
	}
	scheme := runtime.NewScheme()
	if err := monitoringv1.AddToScheme(scheme); err != nil {
		fail(err)
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	checked := 0
	for _, path := range os.Args[1:] {
		data, err := os.ReadFile(path)
		if err != nil {
			fail(err)
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				fail(fmt.Errorf("%s: %w", path, err))
			}
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(doc, &head); err != nil {
				fail(fmt.Errorf("%s: %w", path, err))
			}
			if head.APIVersion != monitoringv1.SchemeGroupVersion.String() {
				continue
			}
			if _, _, err := decoder.Decode(doc, nil, nil); err != nil {
				fail(fmt.Errorf("%s: %s %s: %w", path, head.Kind, head.Metadata.Name, err))
			}
			fmt.Printf("%s %s: ok\n", head.Kind, head.Metadata.Name)
			checked++
		}
	}
	if checked == 0 {
		fail(errors.New("no monitoring.coreos.com/v1 object in the input"))
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "monitoring-check: %v\n", err)
	os.Exit(1)
}
