package fantasytools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
)

// gatewayRequest is what a Wasm tool sends model_generate through
// ModelGateway.
type gatewayRequest struct {
	// Prompt is the user message (required).
	Prompt string `json:"prompt"`
	// System is an optional system message.
	System string `json:"system,omitempty"`
	// MaxOutputTokens bounds the answer when positive.
	MaxOutputTokens int64 `json:"max_output_tokens,omitempty"`
}

// ModelGateway returns a wsfs.ModelGateway over model, for
// wsfs.Workspace.SetModelGateway: the Wasm tools with model_access reach the
// model through the host's own provider configuration (a local endpoint such
// as an Ollama URL or an online provider, whatever model is), never by
// themselves. A request is {"prompt": string, "system"?: string,
// "max_output_tokens"?: integer}, unknown fields refused; the answer is
// {"text": string, "finish_reason": string, "model": string}. A malformed
// request is invalid_arguments for the tool; a failing model gateway_error;
// a model slower than the tool's deadline timeout.
func ModelGateway(model fantasy.LanguageModel) wsfs.ModelGateway {
	return func(ctx context.Context, requestJSON string) (string, error) {
		var req gatewayRequest
		dec := json.NewDecoder(strings.NewReader(requestJSON))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return "", fmt.Errorf("%w: %v; expected {\"prompt\": string, \"system\"?: string, \"max_output_tokens\"?: integer}", wsfs.ErrGatewayRequest, err)
		}
		if strings.TrimSpace(req.Prompt) == "" {
			return "", fmt.Errorf("%w: prompt is empty", wsfs.ErrGatewayRequest)
		}
		var prompt fantasy.Prompt
		if req.System != "" {
			prompt = append(prompt, fantasy.NewSystemMessage(req.System))
		}
		prompt = append(prompt, fantasy.NewUserMessage(req.Prompt))
		call := fantasy.Call{Prompt: prompt}
		if req.MaxOutputTokens > 0 {
			call.MaxOutputTokens = &req.MaxOutputTokens
		}
		resp, err := model.Generate(ctx, call)
		if err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("%s/%s: %w", model.Provider(), model.Model(), ctx.Err())
			}
			return "", fmt.Errorf("%s/%s: %v", model.Provider(), model.Model(), err)
		}
		out, err := json.Marshal(map[string]string{
			"text":          resp.Content.Text(),
			"finish_reason": string(resp.FinishReason),
			"model":         model.Model(),
		})
		return string(out), err
	}
}
