// Command miniclaw is MiniClaw's fantasy-agent provider with wsfs, in one
// program: the workspace settings and the model ID from MiniClaw's config
// file, the model from fantasy's OpenAI-compatible provider, one Runner for
// every chat. go/README.md shows the code between the README markers
// (TestREADMEShowsTheMiniClawProgram in package agent keeps the two the
// same). It needs a model server to run:
//
//	go run ./examples/miniclaw ../config/config.example.json "list my notes"
package main

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"

	"charm.land/fantasy/providers/openaicompat"

	"github.com/wsfs/wsfs/go/agent"
)

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: miniclaw CONFIG MESSAGE")
	}
	configPath, message := os.Args[1], os.Args[2]
	ctx := context.Background()
	// README: begin
	// In the provider's constructor: the workspace settings and the model ID.
	defaults, err := agent.LoadAgentDefaults(configPath)
	if err != nil {
		log.Fatal(err)
	}
	// The model: agents.defaults.model, served by any OpenAI-compatible
	// endpoint (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter ...). fantasy
	// has providers for OpenAI, Anthropic, Google, Bedrock, Azure and
	// OpenRouter too (charm.land/fantasy/providers/...): the same two calls.
	provider, err := openaicompat.New(
		openaicompat.WithBaseURL("http://localhost:11434/v1"), // MiniClaw's endpoint setting
		openaicompat.WithAPIKey(os.Getenv("OPENAI_API_KEY")),  // "" is fine for a local server
	)
	if err != nil {
		log.Fatal(err)
	}
	model, err := provider.LanguageModel(ctx, defaults.Model) // "qwen2.5:7b" in config.example.json
	if err != nil {
		log.Fatal(err)
	}
	cfg := defaults.RunnerConfig(model)
	cfg.Logger = slog.Default()
	runner, err := agent.NewRunner(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer runner.Close()

	// Per inbound message: the chat's session key and the user's text.
	reply, err := runner.Run(ctx, "telegram:12345", message)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply.Text) // send it back to the channel
	// README: end
}
