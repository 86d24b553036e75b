package ctl

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// TestContextInsecureSpellings: a context's insecure switch reads every spelling the other binaries'
// switches read, and anything else is an error naming it instead of a guess.
func TestContextInsecureSpellings(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "TRUE": true, "yes": true, "On": true, "0": false, "false": false, "NO": false, "off": false} {
		var cf configFile
		require.NoError(t, yaml.Unmarshal([]byte("contexts:\n  - name: a\n    insecure: "+v+"\n"), &cf), v)
		require.Equal(t, want, cf.Contexts[0].Insecure, v)
		require.Equal(t, "a", cf.Contexts[0].Name, v)
	}
	var cf configFile
	err := yaml.Unmarshal([]byte("contexts:\n  - name: a\n    insecure: maybe\n"), &cf)
	require.ErrorContains(t, err, "insecure")
	require.ErrorContains(t, err, `"maybe"`)
	// What save writes reads back the same.
	out, err := yaml.Marshal(&configFile{Contexts: []contextSpec{{Name: "a", Insecure: true}}})
	require.NoError(t, err)
	cf = configFile{}
	require.NoError(t, yaml.Unmarshal(out, &cf))
	require.True(t, cf.Contexts[0].Insecure)
}
