# A Level 4 problem: a whole Hugging Face model (the bridge does not run these).
import torch
from transformers import AutoConfig, AutoModelForCausalLM

model_name = "gpt2"
batch_size = 1
sequence_length = 1024


class Model(torch.nn.Module):
    def __init__(self, model_name, config):
        super().__init__()
        self.model = AutoModelForCausalLM.from_pretrained(model_name, config=config)

    def forward(self, x):
        return self.model(x).logits


def get_inputs():
    return [torch.randint(0, 50257, (batch_size, sequence_length))]


def get_init_inputs():
    return [model_name, AutoConfig.from_pretrained(model_name)]
