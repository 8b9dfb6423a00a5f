#pragma once
/** LLM experts: configuration, HTTP providers, accounting, prompts, answers and the expert roles. */
#include "kf/llm/accounting.h"
#include "kf/llm/answer.h"
#include "kf/llm/client.h"
#include "kf/llm/config.h"
#include "kf/llm/experts.h"
#include "kf/llm/prompt.h"
