"""fgemm.nn's FP8 layers against the same layers in BF16 autograd: outputs and gradients at odd shapes, the
accumulation into main_grad, training curves of a small MLP and a small mixture of experts, and the errors.
Every test runs on the CPU; its "cuda" variant (marked gpu) on a GPU."""

import pytest
import torch
import torch.nn.functional as F

import fgemm
from fgemm.nn import GroupedLinear, Linear

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
# calc_diff of an FP8 layer's output or gradient against BF16: about 7e-4 from the E4M3 rounding of two operands.
MAX_DIFF = 2e-3
# Odd feature counts: a partial 128-wide block in K and N of every GEMM of the step.
IN_FEATURES, OUT_FEATURES = 272, 96


def assert_close(actual, expected):
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    assert fgemm.calc_diff(actual.detach(), expected.detach()) < MAX_DIFF


def leaf(tensor):
    return tensor.detach().clone().requires_grad_()


def torch_linear_copy(layer):
    """torch.nn.Linear with the parameters of fgemm.nn.Linear `layer`."""
    reference = torch.nn.Linear(layer.in_features, layer.out_features, bias=layer.bias is not None,
                                device=layer.weight.device, dtype=layer.weight.dtype)
    reference.load_state_dict(layer.state_dict())
    return reference


class BF16GroupedLinear(torch.nn.Module):
    """The reference of GroupedLinear: a loop over the experts of F.linear, in the parameters' dtype."""

    def __init__(self, layer):
        super().__init__()
        self.weight = torch.nn.Parameter(layer.weight.detach().clone())
        self.bias = None if layer.bias is None else torch.nn.Parameter(layer.bias.detach().clone())

    def forward(self, x, m_splits):
        return torch.cat([F.linear(tokens, self.weight[g], None if self.bias is None else self.bias[g])
                          for g, tokens in enumerate(x.split(m_splits))])


@pytest.fixture(autouse=True)
def torch_on_one_thread():
    """torch's own operations on one thread: on these small tensors threads gain nothing, and on a 2-core machine
    its OpenMP threads spinning after each operation slowed fgemm's thread pool and torch itself tenfold."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ---- Linear against torch.nn.Linear ----

def test_linear_initialises_its_parameters_as_torch_linear():
    torch.manual_seed(3)
    layer = Linear(IN_FEATURES, OUT_FEATURES)
    torch.manual_seed(3)
    reference = torch.nn.Linear(IN_FEATURES, OUT_FEATURES, dtype=torch.bfloat16)
    assert torch.equal(layer.weight, reference.weight) and torch.equal(layer.bias, reference.bias)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch", [(1,), (200,), (3, 50), (256,)], ids=["T1", "T200", "3d", "T256"])
def test_linear_output_and_gradients_match_torch_linear(device, bias, batch):
    torch.manual_seed(0)
    layer = Linear(IN_FEATURES, OUT_FEATURES, bias=bias, device=device)
    reference = torch_linear_copy(layer)
    x = torch.randn(*batch, IN_FEATURES, dtype=torch.bfloat16, device=device, requires_grad=True)
    x_reference = leaf(x)
    dy = torch.randn(*batch, OUT_FEATURES, dtype=torch.bfloat16, device=device)
    y, y_reference = layer(x), reference(x_reference)
    y.backward(dy)
    y_reference.backward(dy)
    assert_close(y, y_reference)
    assert_close(x.grad, x_reference.grad)
    assert_close(layer.weight.grad, reference.weight.grad)
    if bias:
        assert_close(layer.bias.grad, reference.bias.grad)


@pytest.mark.parametrize("device", DEVICES)
def test_linear_accumulates_the_weight_gradient_into_main_grad(device):
    torch.manual_seed(1)
    layer = Linear(IN_FEATURES, OUT_FEATURES, device=device, fuse_wgrad_accumulation=True)
    reference = torch_linear_copy(layer)
    layer.weight.main_grad = torch.zeros(layer.weight.shape, dtype=torch.float32, device=device)
    expected = torch.zeros_like(layer.weight.main_grad)
    for tokens in (130, 77):  # two micro-batches
        x = torch.randn(tokens, IN_FEATURES, dtype=torch.bfloat16, device=device)
        dy = torch.randn(tokens, OUT_FEATURES, dtype=torch.bfloat16, device=device)
        layer(x).backward(dy)
        reference.weight.grad = None
        reference(x).backward(dy)
        expected += reference.weight.grad.float()
    assert layer.weight.grad is None
    assert_close(layer.weight.main_grad, expected)
    assert_close(layer.bias.grad, reference.bias.grad)  # the bias's gradient goes to its .grad as usual


@pytest.mark.parametrize("device", DEVICES)
def test_linear_converts_other_input_dtypes_and_returns_their_gradient_in_them(device):
    torch.manual_seed(2)
    layer = Linear(IN_FEATURES, OUT_FEATURES, device=device)
    reference = torch_linear_copy(layer)
    x = torch.randn(64, IN_FEATURES, device=device, requires_grad=True)
    x_reference = leaf(x)
    y, y_reference = layer(x), reference(x_reference.bfloat16())
    y.sum().backward()
    y_reference.sum().backward()
    assert y.dtype == torch.bfloat16 and x.grad.dtype == torch.float32
    assert_close(y, y_reference)
    assert_close(x.grad, x_reference.grad)


@pytest.mark.parametrize("device", DEVICES)
def test_linear_with_float32_parameters_matches_torch_linear_in_float32(device):
    torch.manual_seed(4)
    layer = Linear(IN_FEATURES, OUT_FEATURES, device=device, dtype=torch.float32)
    reference = torch_linear_copy(layer)
    x = torch.randn(100, IN_FEATURES, device=device, requires_grad=True)
    x_reference = leaf(x)
    y, y_reference = layer(x), reference(x_reference)
    y.square().sum().backward()
    y_reference.square().sum().backward()
    assert_close(y, y_reference)
    assert_close(x.grad, x_reference.grad)
    assert_close(layer.weight.grad, reference.weight.grad)


def test_linear_computes_only_the_gradients_asked_for():
    torch.manual_seed(5)
    layer = Linear(IN_FEATURES, OUT_FEATURES, fuse_wgrad_accumulation=True)  # no main_grad: never needed here
    layer.weight.requires_grad_(False)
    x = torch.randn(10, IN_FEATURES, dtype=torch.bfloat16, requires_grad=True)
    layer(x).sum().backward()
    assert x.grad is not None and layer.weight.grad is None and layer.bias.grad is not None
    with torch.no_grad():
        assert layer(x).shape == (10, OUT_FEATURES)


def test_linear_takes_a_batch_without_tokens():
    layer = Linear(IN_FEATURES, OUT_FEATURES)
    x = torch.empty(2, 0, IN_FEATURES, dtype=torch.bfloat16, requires_grad=True)
    y = layer(x)
    y.sum().backward()
    assert y.shape == (2, 0, OUT_FEATURES) and x.grad.shape == x.shape
    assert not layer.weight.grad.any() and not layer.bias.grad.any()


# ---- GroupedLinear against a loop over the experts ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("m_splits", [[100, 0, 300, 1], [1, 0, 0, 0], [128, 256, 0, 130]],
                         ids=["odd", "one-token", "aligned"])
def test_grouped_linear_output_and_gradients_match_a_loop_over_experts(device, bias, m_splits):
    torch.manual_seed(6)
    layer = GroupedLinear(len(m_splits), IN_FEATURES, OUT_FEATURES, bias=bias, device=device)
    reference = BF16GroupedLinear(layer)
    tokens = sum(m_splits)
    x = torch.randn(tokens, IN_FEATURES, dtype=torch.bfloat16, device=device, requires_grad=True)
    x_reference = leaf(x)
    dy = torch.randn(tokens, OUT_FEATURES, dtype=torch.bfloat16, device=device)
    y, y_reference = layer(x, m_splits), reference(x_reference, m_splits)
    y.backward(dy)
    y_reference.backward(dy)
    assert_close(y, y_reference)
    assert_close(x.grad, x_reference.grad)
    assert_close(layer.weight.grad, reference.weight.grad)
    for expert, count in enumerate(m_splits):
        if count == 0:  # an expert with no tokens gets a zero gradient
            assert not layer.weight.grad[expert].any()
        else:
            assert_close(layer.weight.grad[expert], reference.weight.grad[expert])
    if bias:
        assert_close(layer.bias.grad, reference.bias.grad)


@pytest.mark.parametrize("device", DEVICES)
def test_grouped_linear_accumulates_the_weight_gradient_into_main_grad(device):
    torch.manual_seed(7)
    layer = GroupedLinear(3, IN_FEATURES, OUT_FEATURES, device=device, fuse_wgrad_accumulation=True)
    reference = BF16GroupedLinear(layer)
    layer.weight.main_grad = torch.zeros(layer.weight.shape, dtype=torch.float32, device=device)
    expected = torch.zeros_like(layer.weight.main_grad)
    for m_splits in ([50, 0, 140], [3, 200, 0]):
        x = torch.randn(sum(m_splits), IN_FEATURES, dtype=torch.bfloat16, device=device)
        dy = torch.randn(sum(m_splits), OUT_FEATURES, dtype=torch.bfloat16, device=device)
        layer(x, m_splits).backward(dy)
        reference.weight.grad = None
        reference(x, m_splits).backward(dy)
        expected += reference.weight.grad.float()
    assert layer.weight.grad is None
    assert_close(layer.weight.main_grad, expected)


def test_grouped_linear_takes_a_batch_without_tokens():
    layer = GroupedLinear(2, IN_FEATURES, OUT_FEATURES)
    x = torch.empty(0, IN_FEATURES, dtype=torch.bfloat16, requires_grad=True)
    y = layer(x, [0, 0])
    y.sum().backward()
    assert y.shape == (0, OUT_FEATURES) and x.grad.shape == x.shape and not layer.weight.grad.any()


# ---- the weight quantized once per optimizer step (is_first_microbatch) ----

def micro_batch_step(layer, x, dy, *inputs, **options):
    """y, x.grad and the weight gradient of one micro-batch, the gradients starting from none."""
    x = leaf(x)
    layer.weight.grad = None
    y = layer(x, *inputs, **options)
    y.backward(dy)
    return y.detach(), x.grad, layer.weight.grad


LAYERS = {
    "linear": (lambda device: Linear(IN_FEATURES, OUT_FEATURES, device=device), (), 100),
    "grouped": (lambda device: GroupedLinear(3, IN_FEATURES, OUT_FEATURES, device=device), ([40, 0, 90],), 130),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", LAYERS)
def test_micro_batches_after_the_first_reuse_its_codes_with_the_same_bits(device, kind):
    make, inputs, tokens = LAYERS[kind]
    torch.manual_seed(8)
    layer = make(device)
    x = torch.randn(tokens, IN_FEATURES, dtype=torch.bfloat16, device=device)
    dy = torch.randn(tokens, OUT_FEATURES, dtype=torch.bfloat16, device=device)
    uncached = micro_batch_step(layer, x, dy, *inputs)
    first = micro_batch_step(layer, x, dy, *inputs, is_first_microbatch=True)
    with torch.no_grad():  # a write the weight's version does not see: the kept codes are still used
        layer.weight.data.mul_(2)
    later = micro_batch_step(layer, x, dy, *inputs, is_first_microbatch=False)
    for a, b, c in zip(uncached, first, later):
        assert torch.equal(a, b) and torch.equal(a, c)
    requantized = micro_batch_step(layer, x, dy, *inputs, is_first_microbatch=True)
    assert not torch.equal(requantized[0], first[0])  # the doubled weight, quantized anew
    layer.weight.data.div_(2)
    assert all(torch.equal(a, b) for a, b in zip(micro_batch_step(layer, x, dy, *inputs), uncached))


@pytest.mark.parametrize("kind", LAYERS)
def test_a_later_micro_batch_needs_the_codes_of_this_step(kind):
    make, inputs, tokens = LAYERS[kind]
    layer = make("cpu")
    x = torch.randn(tokens, IN_FEATURES, dtype=torch.bfloat16)
    name = type(layer).__name__
    with pytest.raises(ValueError, match=f"nn.{name}: argument 'is_first_microbatch' is False, but no earlier"):
        layer(x, *inputs, is_first_microbatch=False)
    layer(x, *inputs, is_first_microbatch=True)
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    layer(x, *inputs, is_first_microbatch=False).float().sum().backward()
    optimizer.step()  # updates the weight in place
    with pytest.raises(ValueError, match="the weight changed since the micro-batch that quantized it"):
        layer(x, *inputs, is_first_microbatch=False)
    layer(x, *inputs, is_first_microbatch=True)
    layer(x, *inputs)  # None: the layer quantizes the weight itself, and the kept codes stay
    layer(x, *inputs, is_first_microbatch=False)
    with pytest.raises(TypeError, match="argument 'is_first_microbatch' expected a bool or None, got int"):
        layer(x, *inputs, is_first_microbatch=1)


def test_grouped_linear_initialises_each_expert_as_torch_linear():
    torch.manual_seed(8)
    layer = GroupedLinear(2, IN_FEATURES, OUT_FEATURES, bias=True)
    torch.manual_seed(8)
    for expert in range(2):
        reference = torch.nn.Linear(IN_FEATURES, OUT_FEATURES, dtype=torch.bfloat16)
        assert torch.equal(layer.weight[expert], reference.weight) and torch.equal(layer.bias[expert], reference.bias)


# ---- Training: the FP8 loss curve against the BF16 one ----

STEPS, BATCH, WIDTH, HIDDEN, EXPERTS = 300, 128, 64, 128, 4


def regression_data(device):
    """A fixed teacher (a random two-layer network) and a stream of its inputs and noisy outputs. The noise keeps
    the loss well above the floor that FP8's rounding of the forward pass sets (about 1e-3 of the outputs'
    variance), as in real training, where the loss is far above it."""
    generator = torch.Generator().manual_seed(11)
    teacher_in = torch.randn(WIDTH, HIDDEN, generator=generator) / WIDTH ** 0.5
    teacher_out = torch.randn(HIDDEN, WIDTH, generator=generator) / HIDDEN ** 0.5
    for _ in range(STEPS):
        x = torch.randn(BATCH, WIDTH, generator=generator)
        y = torch.tanh(x @ teacher_in) @ teacher_out + 0.2 * torch.randn(BATCH, WIDTH, generator=generator)
        yield x.to(device, torch.bfloat16), y.to(device)


def train(model, device):
    """The loss of each Adam step on the regression data."""
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    losses = []
    for x, target in regression_data(device):
        loss = F.mse_loss(model(x).float(), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def assert_same_training_curve(fp8_losses, bf16_losses):
    """The FP8 model learns (its loss falls below half) as the BF16 model does: its loss averaged over each
    fifth of the run within 2% of BF16's."""
    fifth = STEPS // 5
    assert sum(fp8_losses[-fifth:]) < 0.5 * sum(fp8_losses[:fifth])
    for start in range(fifth, STEPS, fifth):
        fp8, bf16 = sum(fp8_losses[start:start + fifth]), sum(bf16_losses[start:start + fifth])
        assert abs(fp8 - bf16) < 0.02 * bf16, (start, fp8 / bf16)


def mlp(linear, device):
    torch.manual_seed(12)
    return torch.nn.Sequential(linear(WIDTH, HIDDEN, device=device, dtype=torch.bfloat16), torch.nn.GELU(),
                               linear(HIDDEN, WIDTH, device=device, dtype=torch.bfloat16))


@pytest.mark.parametrize("device", DEVICES)
def test_mlp_trains_as_in_bf16(device):
    assert_same_training_curve(train(mlp(Linear, device), device), train(mlp(torch.nn.Linear, device), device))


class MoE(torch.nn.Module):
    """A top-1 mixture of experts: a BF16 router picks each token's expert, whose up and down projections
    (GroupedLinear, or the reference) run on the tokens sorted by expert; the output is scaled by the router's
    probability, through which the router learns."""

    def __init__(self, grouped_linear, device):
        super().__init__()
        torch.manual_seed(13)
        self.router = torch.nn.Linear(WIDTH, EXPERTS, device=device, dtype=torch.bfloat16)
        self.up = GroupedLinear(EXPERTS, WIDTH, HIDDEN, device=device)
        self.down = GroupedLinear(EXPERTS, HIDDEN, WIDTH, device=device)
        if grouped_linear is not GroupedLinear:
            self.up, self.down = grouped_linear(self.up), grouped_linear(self.down)

    def forward(self, x):
        probability, expert = self.router(x).float().softmax(-1).max(-1)
        order = expert.argsort(stable=True)
        m_splits = torch.bincount(expert, minlength=EXPERTS).tolist()
        sorted_y = self.down(F.gelu(self.up(x[order], m_splits)), m_splits)
        y = torch.empty_like(sorted_y).index_copy(0, order, sorted_y)
        return y * probability.unsqueeze(-1).to(y.dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_mixture_of_experts_trains_as_in_bf16(device):
    assert_same_training_curve(train(MoE(GroupedLinear, device), device),
                               train(MoE(BF16GroupedLinear, device), device))


# ---- Errors ----

@pytest.mark.parametrize("make, error, match", [
    (lambda: Linear(100, 64), ValueError, "'in_features' must be a multiple of 16"),
    (lambda: Linear(64, 0), ValueError, "'out_features' must be positive"),
    (lambda: Linear(64.0, 64), TypeError, "'in_features' expected an int"),
    (lambda: Linear(64, 64, dtype=torch.float16), TypeError, "'dtype' must be torch.bfloat16 or torch.float32"),
    (lambda: Linear(64, 64, bias=1), TypeError, "'bias' expected a bool"),
    (lambda: GroupedLinear(0, 64, 64), ValueError, "'num_experts' must be positive"),
    (lambda: GroupedLinear(2, 64, 24), ValueError, "'out_features' must be a multiple of 16"),
])
def test_constructor_errors_name_the_argument(make, error, match):
    with pytest.raises(error, match=match):
        make()


LINEAR_CALLS = [
    (lambda: torch.randn(4, 32, dtype=torch.bfloat16), ValueError, r"'x' expected shape \[\.\.\., in_features\]"),
    (lambda: torch.ones(4, 64, dtype=torch.int32), TypeError, "'x' expected a floating-point tensor"),
    (lambda: torch.tensor(1.0), ValueError, "'x' expected shape"),
    (lambda: [[1.0] * 64], TypeError, "'x' expected a torch.Tensor"),
]


@pytest.mark.parametrize("x, error, match", LINEAR_CALLS)
def test_linear_input_errors_name_the_argument(x, error, match):
    with pytest.raises(error, match=f"fgemm.nn.Linear: argument {match}"):
        Linear(64, 64)(x())


@pytest.mark.parametrize("x, m_splits, error, match", [
    (torch.randn(2, 5, 64), [5, 5], ValueError, r"'x' expected shape \[tokens, in_features\]"),
    (torch.randn(10, 64), [5, 4], ValueError, "'m_splits' expected 2 counts .* summing to the 10 tokens"),
    (torch.randn(10, 64), [11, -1], ValueError, "'m_splits' expected 2 counts .* each >= 0"),
    (torch.randn(10, 64), [10], ValueError, "'m_splits' expected 2 counts"),
    (torch.randn(10, 64), torch.tensor([5, 5]), TypeError, "'m_splits' expected a list of ints"),
])
def test_grouped_linear_input_errors_name_the_argument(x, m_splits, error, match):
    with pytest.raises(error, match=f"fgemm.nn.GroupedLinear: argument {match}"):
        GroupedLinear(2, 64, 64)(x, m_splits)


@pytest.mark.parametrize("main_grad, error, match", [
    (None, AttributeError, "needs weight.main_grad"),
    (torch.zeros(64, 64, dtype=torch.bfloat16), ValueError, "must be float32 of shape"),
    (torch.zeros(32, 64), ValueError, "must be float32 of shape"),
    (torch.zeros(64, 64).t(), ValueError, "must be contiguous"),
])
def test_fused_accumulation_checks_main_grad(main_grad, error, match):
    layer = Linear(64, 64, fuse_wgrad_accumulation=True)
    if main_grad is not None:
        layer.weight.main_grad = main_grad
    with pytest.raises(error, match=f"fgemm.nn.Linear: .*{match}"):
        layer(torch.randn(3, 64))


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["Linear", "GroupedLinear"])
def test_a_step_never_waits_for_the_gpu(kind):
    """A step (bias included) enqueues its work without a synchronizing operation, such as a copy from pageable
    memory, which would keep the host from running ahead of the GPU."""
    torch.manual_seed(9)
    m_splits = [100, 0, 300]
    if kind == "Linear":
        layer, inputs = Linear(IN_FEATURES, OUT_FEATURES, device="cuda"), ()
    else:
        layer, inputs = GroupedLinear(len(m_splits), IN_FEATURES, OUT_FEATURES, bias=True, device="cuda"), (m_splits,)
    x = torch.randn(sum(m_splits), IN_FEATURES, dtype=torch.bfloat16, device="cuda", requires_grad=True)
    dy = torch.randn(sum(m_splits), OUT_FEATURES, dtype=torch.bfloat16, device="cuda")
    layer(x, *inputs).backward(dy)  # the kernels compiled and loaded
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        layer(x, *inputs).backward(dy)
    finally:
        torch.cuda.set_sync_debug_mode("default")


@pytest.mark.gpu
def test_input_on_another_device_than_the_layer_is_refused():
    with pytest.raises(ValueError, match="fgemm.nn.Linear: argument 'x' is on cuda:0, the layer's parameters on cpu"):
        Linear(64, 64)(torch.randn(3, 64, device="cuda"))
