package presence

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
)

// isNoMatch reports an API that the server does not serve (the monitoring CRDs are missing).
func isNoMatch(err error) bool {
	return meta.IsNoMatchError(err) || strings.Contains(err.Error(), "the server could not find the requested resource")
}
