"""webjax.onnx on the ONNX node conformance cases (tests/onnx_conformance.py), next to
onnxruntime.

Every case whose inputs and outputs fit JAX's dtypes runs on wasm (the default native device);
every 20th on cpu, webgpu and webgl (WEBJAX_ONNX_FULL=1 runs all of them on every device). A
case in KNOWN_FAILURES must fail and every other must pass, so the test fails both on a
regression and on a listed case that starts passing. The counts (cases, fitting, webjax and
onnxruntime passes) come from `.venv/bin/python tests/onnx_conformance.py --device wasm --ort`.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("onnx", reason="the oracle extra's onnx package generates the cases")

import onnx_conformance as oc
import webjax
from webjax._src.runtime import backend as rt

FULL = os.environ.get("WEBJAX_ONNX_FULL") == "1"
SAMPLE_EVERY = 20  # cpu, webgpu, webgl

_FITTING = sorted(name for name, case in oc.cases().items() if oc.fits_jax(case))


def _params() -> list:
    out = []
    for platform in ("wasm", "cpu", "webgpu", "webgl"):
        names = _FITTING if FULL or platform == "wasm" else oc.sample(_FITTING, SAMPLE_EVERY)
        out += [pytest.param(platform, name, id=f"{platform}-{name}") for name in names]
    return out


def _known(platform: str, name: str) -> str | None:
    return DEVICE_FAILURES.get(platform, {}).get(name) or KNOWN_FAILURES.get(name)


@pytest.mark.parametrize(("platform", "name"), _params())
def test_node_case(platform: str, name: str) -> None:
    reason = rt.unavailable_reason(platform)
    if reason is not None:
        pytest.skip(f"backend {platform} unavailable on this host: {reason}")
    with webjax.default_device(webjax.devices(platform)[0]):
        failure = oc.run_webjax(oc.cases()[name])
    known = _known(platform, name)
    if known is None:
        assert failure is None, failure
    else:
        assert failure is not None, f"{name} now passes on {platform}: remove it ({known})"


def test_known_failures_are_cases() -> None:
    listed = set(KNOWN_FAILURES) | {n for d in DEVICE_FAILURES.values() for n in d}
    assert listed <= set(_FITTING), sorted(listed - set(_FITTING))


def test_onnxruntime_on_a_sample() -> None:
    """The comparison's other side runs here too: onnxruntime on every 20th fitting case, each
    of its failures one it has on the full sweep as well (ORT_FAILURES' count is in FEATURES.md)."""
    pytest.importorskip("onnxruntime")
    for name in oc.sample(_FITTING, SAMPLE_EVERY):
        failure = oc.run_ort(oc.cases()[name])
        assert (failure is None) == (name not in ORT_FAILURES), (name, failure)


# Cases run under jit(model.run): control flow (If through lax.cond, Scan), recurrent layers,
# attention with a KV cache, shape-computing subgraphs; each must match the expected outputs.
JIT_CASES = [
    "test_if", "test_if_seq", "test_scan9_sum", "test_scan9_multi_state", "test_lstm_defaults",
    "test_gru_defaults", "test_attention_4d_gqa_with_past_and_present",
    "test_attention_4d_gqa_causal_nonpad_decode_expanded", "test_layer_normalization_4d_axis0",
    "test_maxpool_2d_ceil", "test_convtranspose_pads", "test_einsum_batch_matmul",
    "test_gathernd_example_int32_batch_dim1",
]  # fmt: skip

# Cases whose output shapes depend on an input's values: under jit a clear NotImplementedError.
JIT_NEEDS_VALUES = [
    "test_reshape_negative_dim", "test_nonzero_example", "test_resize_downsample_sizes_nearest",
    "test_range_float_type_positive_delta",
]  # fmt: skip


@pytest.mark.parametrize("name", JIT_CASES)
def test_node_case_under_jit(name: str) -> None:
    from webjax.onnx import ONNXModel

    case = oc.cases()[name]
    model = ONNXModel(case.model.SerializeToString())
    run = webjax.jit(model.run)
    for inputs, outputs in case.data_sets:
        got = run(oc._inputs(case, inputs))
        for out, expected in zip(model.output_names, outputs):
            why = oc.compare(oc._expected(expected), oc._host(got[out]), case, exact_dtype=False)
            assert why is None, f"{out}: {why}"


@pytest.mark.parametrize("name", JIT_NEEDS_VALUES)
def test_value_dependent_shapes_under_jit_raise(name: str) -> None:
    from webjax.onnx import ONNXModel

    case = oc.cases()[name]
    model = ONNXModel(case.model.SerializeToString())
    inputs, _ = case.data_sets[0]
    with pytest.raises(NotImplementedError, match="at trace time"):
        webjax.jit(model.run)(oc._inputs(case, inputs))


# What webjax.onnx does not do, case by case, with the reason (regenerate the reasons with
# `tests/onnx_conformance.py --device wasm --failures`).
KNOWN_FAILURES: dict[str, str] = {
    "test_adagrad": "operator Adagrad of domain 'ai.onnx.preview.training' (opset 1): unsupported",
    "test_adagrad_multiple":
        "operator Adagrad of domain 'ai.onnx.preview.training' (opset 1): unsupported",
    "test_adam": "operator Adam of domain 'ai.onnx.preview.training' (opset 1): unsupported",
    "test_adam_multiple":
        "operator Adam of domain 'ai.onnx.preview.training' (opset 1): unsupported",
    "test_ai_onnx_ml_array_feature_extractor":
        "operator ArrayFeatureExtractor of domain 'ai.onnx.ml' (opset 1): unsupported",
    "test_ai_onnx_ml_binarizer":
        "operator Binarizer of domain 'ai.onnx.ml' (opset 1): unsupported",
    "test_ai_onnx_ml_tree_ensemble_set_membership":
        "operator TreeEnsemble of domain 'ai.onnx.ml' (opset 5): unsupported",
    "test_ai_onnx_ml_tree_ensemble_single_tree":
        "operator TreeEnsemble of domain 'ai.onnx.ml' (opset 5): unsupported",
    "test_basic_deform_conv_with_padding": 'operator DeformConv (opset 22): unsupported',
    "test_basic_deform_conv_without_padding": 'operator DeformConv (opset 22): unsupported',
    "test_batchnorm_epsilon_training_mode":
        'BatchNormalization (opset 15) with training_mode=1: unsupported',
    "test_batchnorm_example_training_mode":
        'BatchNormalization (opset 15) with training_mode=1: unsupported',
    "test_bernoulli": 'operator Bernoulli (opset 22): unsupported',
    "test_bernoulli_double": 'operator Bernoulli (opset 22): unsupported',
    "test_bernoulli_double_expanded": 'operator RandomUniformLike (opset 22): unsupported',
    "test_bernoulli_expanded": 'operator RandomUniformLike (opset 22): unsupported',
    "test_bernoulli_seed": 'operator Bernoulli (opset 22): unsupported',
    "test_bernoulli_seed_expanded": 'operator RandomUniformLike (opset 22): unsupported',
    "test_bitcast_float64_to_int64":
        'BitCast (opset 26) with a bitcast from float32 to int64 (64-bit types are off): unsu',
    "test_bitcast_int64_to_float64":
        'BitCast (opset 26) with a bitcast from int32 to float64 (64-bit types are off): unsu',
    "test_causal_conv_with_state_b1_c1_degenerate":
        'operator CausalConvWithState (opset 27): unsupported',
    "test_causal_conv_with_state_basic": 'operator CausalConvWithState (opset 27): unsupported',
    "test_causal_conv_with_state_decode_step":
        'operator CausalConvWithState (opset 27): unsupported',
    "test_causal_conv_with_state_fp16": 'operator CausalConvWithState (opset 27): unsupported',
    "test_causal_conv_with_state_kernel_size_one":
        'operator CausalConvWithState (opset 27): unsupported',
    "test_causal_conv_with_state_short_input_no_past_state":
        'operator CausalConvWithState (opset 27): unsupported',
    "test_causal_conv_with_state_silu": 'operator CausalConvWithState (opset 27): unsupported',
    "test_causal_conv_with_state_silu_fp16":
        'operator CausalConvWithState (opset 27): unsupported',
    "test_causal_conv_with_state_silu_with_past_state":
        'operator CausalConvWithState (opset 27): unsupported',
    "test_causal_conv_with_state_swish_alias":
        'operator CausalConvWithState (opset 27): unsupported',
    "test_causal_conv_with_state_with_bias":
        'operator CausalConvWithState (opset 27): unsupported',
    "test_causal_conv_with_state_with_bias_and_past_state":
        'operator CausalConvWithState (opset 27): unsupported',
    "test_causal_conv_with_state_with_past_state":
        'operator CausalConvWithState (opset 27): unsupported',
    "test_col2im": 'operator Col2Im (opset 18): unsupported',
    "test_col2im_5d": 'operator Col2Im (opset 18): unsupported',
    "test_col2im_dilations": 'operator Col2Im (opset 18): unsupported',
    "test_col2im_pads": 'operator Col2Im (opset 18): unsupported',
    "test_col2im_strides": 'operator Col2Im (opset 18): unsupported',
    "test_deform_conv_with_mask_bias": 'operator DeformConv (opset 22): unsupported',
    "test_deform_conv_with_multiple_offset_groups": 'operator DeformConv (opset 22): unsupported',
    "test_flexattention":
        "operator FlexAttention of domain 'ai.onnx.preview' (opset 1): unsupported",
    "test_flexattention_causal_mask":
        "operator FlexAttention of domain 'ai.onnx.preview' (opset 1): unsupported",
    "test_flexattention_diff_head_sizes":
        "operator FlexAttention of domain 'ai.onnx.preview' (opset 1): unsupported",
    "test_flexattention_double":
        "operator FlexAttention of domain 'ai.onnx.preview' (opset 1): unsupported",
    "test_flexattention_fp16":
        "operator FlexAttention of domain 'ai.onnx.preview' (opset 1): unsupported",
    "test_flexattention_gqa":
        "operator FlexAttention of domain 'ai.onnx.preview' (opset 1): unsupported",
    "test_flexattention_prob_mod":
        "operator FlexAttention of domain 'ai.onnx.preview' (opset 1): unsupported",
    "test_flexattention_relative_positional":
        "operator FlexAttention of domain 'ai.onnx.preview' (opset 1): unsupported",
    "test_flexattention_scaled":
        "operator FlexAttention of domain 'ai.onnx.preview' (opset 1): unsupported",
    "test_flexattention_score_mod":
        "operator FlexAttention of domain 'ai.onnx.preview' (opset 1): unsupported",
    "test_flexattention_soft_cap":
        "operator FlexAttention of domain 'ai.onnx.preview' (opset 1): unsupported",
    "test_image_decoder_decode_bmp_rgb": 'operator ImageDecoder (opset 20): unsupported',
    "test_image_decoder_decode_jpeg2k_rgb": 'operator ImageDecoder (opset 20): unsupported',
    "test_image_decoder_decode_jpeg_bgr": 'operator ImageDecoder (opset 20): unsupported',
    "test_image_decoder_decode_jpeg_grayscale": 'operator ImageDecoder (opset 20): unsupported',
    "test_image_decoder_decode_jpeg_rgb": 'operator ImageDecoder (opset 20): unsupported',
    "test_image_decoder_decode_png_rgb": 'operator ImageDecoder (opset 20): unsupported',
    "test_image_decoder_decode_pnm_rgb": 'operator ImageDecoder (opset 20): unsupported',
    "test_image_decoder_decode_tiff_rgb": 'operator ImageDecoder (opset 20): unsupported',
    "test_image_decoder_decode_webp_rgb": 'operator ImageDecoder (opset 20): unsupported',
    "test_linear_attention_decode_step": 'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_delta": 'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_explicit_scale": 'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_fp16": 'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_gated": 'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_gated_delta": 'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_gated_delta_beta_scalar":
        'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_gated_delta_gqa": 'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_gated_delta_mqa": 'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_gated_per_head_decay":
        'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_linear": 'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_linear_t1_no_past": 'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_no_past_explicit_zeros":
        'operator LinearAttention (opset 27): unsupported',
    "test_linear_attention_prefill_with_past": 'operator LinearAttention (opset 27): unsupported',
    "test_maxunpool_export_with_output_shape": 'operator MaxUnpool (opset 22): unsupported',
    "test_maxunpool_export_without_output_shape": 'operator MaxUnpool (opset 22): unsupported',
    "test_melweightmatrix": 'output: values differ (max abs difference 1.0)',
    "test_momentum":
        "operator Momentum of domain 'ai.onnx.preview.training' (opset 1): unsupported",
    "test_momentum_multiple":
        "operator Momentum of domain 'ai.onnx.preview.training' (opset 1): unsupported",
    "test_nesterov_momentum":
        "operator Momentum of domain 'ai.onnx.preview.training' (opset 1): unsupported",
    "test_reduce_log_sum_exp_empty_set":
        'ValueError: zero-size array to reduction operation max which has no identity',
    "test_resize_downsample_scales_cubic_antialias":
        'Resize (opset 19) with antialias=1: unsupported',
    "test_resize_downsample_scales_linear_antialias":
        'Resize (opset 19) with antialias=1: unsupported',
    "test_resize_downsample_sizes_cubic_antialias":
        'Resize (opset 19) with antialias=1: unsupported',
    "test_resize_downsample_sizes_linear_antialias":
        'Resize (opset 19) with antialias=1: unsupported',
    "test_resize_tf_crop_and_resize":
        "Resize (opset 19) with coordinate_transformation_mode='tf_crop_and_resize': unsuppor",
    "test_resize_tf_crop_and_resize_axes_2_3":
        "Resize (opset 19) with coordinate_transformation_mode='tf_crop_and_resize': unsuppor",
    "test_resize_tf_crop_and_resize_axes_3_2":
        "Resize (opset 19) with coordinate_transformation_mode='tf_crop_and_resize': unsuppor",
    "test_resize_tf_crop_and_resize_extrapolation_value":
        "Resize (opset 19) with coordinate_transformation_mode='tf_crop_and_resize': unsuppor",
    "test_roialign_aligned_false": 'operator RoiAlign (opset 22): unsupported',
    "test_roialign_aligned_true": 'operator RoiAlign (opset 22): unsupported',
    "test_roialign_mode_max": 'operator RoiAlign (opset 22): unsupported',
    "test_scan_sum":
        'Scan (opset 8) with the opset-8 form (sequence_lens and batch axis): unsupported',
    "test_tfidfvectorizer_tf_batch_onlybigrams_skip0":
        'operator TfIdfVectorizer (opset 9): unsupported',
    "test_tfidfvectorizer_tf_batch_onlybigrams_skip5":
        'operator TfIdfVectorizer (opset 9): unsupported',
    "test_tfidfvectorizer_tf_batch_uniandbigrams_skip5":
        'operator TfIdfVectorizer (opset 9): unsupported',
    "test_tfidfvectorizer_tf_only_bigrams_skip0":
        'operator TfIdfVectorizer (opset 9): unsupported',
    "test_tfidfvectorizer_tf_onlybigrams_levelempty":
        'operator TfIdfVectorizer (opset 9): unsupported',
    "test_tfidfvectorizer_tf_onlybigrams_skip5": 'operator TfIdfVectorizer (opset 9): unsupported',
    "test_tfidfvectorizer_tf_uniandbigrams_skip5":
        'operator TfIdfVectorizer (opset 9): unsupported',
    "test_training_dropout":
        'Dropout (opset 22) with training_mode=True (needs a random key): unsupported',
    "test_training_dropout_default":
        'Dropout (opset 22) with training_mode=True (needs a random key): unsupported',
    "test_training_dropout_default_mask":
        'Dropout (opset 22) with training_mode=True (needs a random key): unsupported',
    "test_training_dropout_mask":
        'Dropout (opset 22) with training_mode=True (needs a random key): unsupported',
    "test_training_dropout_zero_ratio":
        'Dropout (opset 22) with training_mode=True (needs a random key): unsupported',
    "test_training_dropout_zero_ratio_mask":
        'Dropout (opset 22) with training_mode=True (needs a random key): unsupported',
}  # fmt: skip

# Failures on one device only.
DEVICE_FAILURES: dict[str, dict[str, str]] = {}

# The fitting cases onnxruntime (CPU execution provider) fails.
ORT_FAILURES: set[str] = {
    'test_adagrad',
    'test_adagrad_multiple',
    'test_adam',
    'test_adam_multiple',
    'test_attention_3d_causal_bf16',
    'test_attention_3d_causal_bf16_expanded',
    'test_attention_4d_attn_mask_causal_bf16',
    'test_attention_4d_attn_mask_causal_bf16_expanded',
    'test_attention_4d_causal_bf16',
    'test_attention_4d_causal_bf16_expanded',
    'test_attention_4d_causal_padded_kv_bf16',
    'test_attention_4d_causal_padded_kv_bf16_expanded',
    'test_attention_4d_diff_heads_mask4d_padded_kv',
    'test_attention_4d_padded_kv_bf16',
    'test_attention_4d_padded_kv_bf16_expanded',
    'test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal',
    'test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal',
    'test_bernoulli',
    'test_bernoulli_double',
    'test_bernoulli_double_expanded',
    'test_bernoulli_expanded',
    'test_bernoulli_seed',
    'test_bernoulli_seed_expanded',
    'test_bitcast_bool_to_uint8',
    'test_blackmanwindow',
    'test_blackmanwindow_expanded',
    'test_blackmanwindow_symmetric',
    'test_blackmanwindow_symmetric_expanded',
    'test_cast_BFLOAT16_to_FLOAT',
    'test_cast_FLOAT_to_BFLOAT16',
    'test_castlike_BFLOAT16_to_FLOAT',
    'test_castlike_BFLOAT16_to_FLOAT_expanded',
    'test_castlike_FLOAT_to_BFLOAT16',
    'test_castlike_FLOAT_to_BFLOAT16_expanded',
    'test_celu_bfloat16',
    'test_celu_bfloat16_expanded',
    'test_clip',
    'test_clip_default_int8_max',
    'test_clip_default_int8_max_expanded',
    'test_clip_default_int8_min',
    'test_clip_default_int8_min_expanded',
    'test_clip_default_max',
    'test_clip_default_max_expanded',
    'test_clip_default_min',
    'test_clip_default_min_expanded',
    'test_clip_example',
    'test_clip_example_expanded',
    'test_clip_expanded',
    'test_clip_inbounds',
    'test_clip_inbounds_expanded',
    'test_clip_min_greater_than_max',
    'test_clip_min_greater_than_max_expanded',
    'test_clip_outbounds',
    'test_clip_outbounds_expanded',
    'test_clip_splitbounds',
    'test_clip_splitbounds_expanded',
    'test_compress_bfloat16',
    'test_constant_pad',
    'test_constant_pad_axes',
    'test_constant_pad_negative_axes',
    'test_convinteger_with_padding',
    'test_convinteger_without_padding',
    'test_cumsum_1d',
    'test_cumsum_1d_exclusive',
    'test_cumsum_1d_int32_exclusive',
    'test_cumsum_1d_reverse',
    'test_cumsum_1d_reverse_exclusive',
    'test_cumsum_2d_axis_0',
    'test_cumsum_2d_axis_1',
    'test_cumsum_2d_int32',
    'test_cumsum_2d_negative_axis',
    'test_dequantizelinear',
    'test_dequantizelinear_axis',
    'test_dequantizelinear_blocked',
    'test_dequantizelinear_int16',
    'test_dequantizelinear_uint16',
    'test_dft',
    'test_dft_axis',
    'test_dft_axis_opset19',
    'test_dft_inverse',
    'test_dft_inverse_opset19',
    'test_dft_irfft',
    'test_dft_irfft_opset19',
    'test_dft_opset19',
    'test_dft_rfft',
    'test_dft_rfft_opset19',
    'test_dropout_default_mask_ratio',
    'test_dropout_default_ratio',
    'test_einsum_batch_matmul_bfloat16',
    'test_einsum_sum_bfloat16',
    'test_einsum_transpose_bfloat16',
    'test_flexattention',
    'test_flexattention_causal_mask',
    'test_flexattention_diff_head_sizes',
    'test_flexattention_double',
    'test_flexattention_fp16',
    'test_flexattention_gqa',
    'test_flexattention_prob_mod',
    'test_flexattention_relative_positional',
    'test_flexattention_scaled',
    'test_flexattention_score_mod',
    'test_flexattention_soft_cap',
    'test_gru_batchwise',
    'test_hammingwindow',
    'test_hammingwindow_expanded',
    'test_hammingwindow_symmetric',
    'test_hammingwindow_symmetric_expanded',
    'test_hannwindow',
    'test_hannwindow_expanded',
    'test_hannwindow_symmetric',
    'test_hannwindow_symmetric_expanded',
    'test_image_decoder_decode_bmp_rgb',
    'test_image_decoder_decode_jpeg2k_rgb',
    'test_image_decoder_decode_jpeg_bgr',
    'test_image_decoder_decode_jpeg_grayscale',
    'test_image_decoder_decode_jpeg_rgb',
    'test_image_decoder_decode_png_rgb',
    'test_image_decoder_decode_pnm_rgb',
    'test_image_decoder_decode_tiff_rgb',
    'test_image_decoder_decode_webp_rgb',
    'test_lstm_batchwise',
    'test_max_int16',
    'test_max_uint16',
    'test_maxunpool_export_with_output_shape',
    'test_melweightmatrix',
    'test_min_int16',
    'test_min_uint16',
    'test_momentum',
    'test_momentum_multiple',
    'test_nesterov_momentum',
    'test_onehot_negative_indices',
    'test_onehot_out_of_range_indices',
    'test_onehot_with_axis',
    'test_onehot_with_bfloat16_values',
    'test_onehot_with_negative_axis',
    'test_onehot_without_axis',
    'test_optional_get_element_optional_sequence',
    'test_optional_get_element_optional_tensor',
    'test_optional_get_element_sequence',
    'test_optional_get_element_tensor',
    'test_optional_has_element_empty_no_input_name_optional_input',
    'test_optional_has_element_empty_no_input_name_tensor_input',
    'test_optional_has_element_empty_no_input_optional_input',
    'test_optional_has_element_empty_no_input_tensor_input',
    'test_optional_has_element_empty_optional_input',
    'test_optional_has_element_optional_input',
    'test_optional_has_element_tensor_input',
    'test_pow_types_float32_uint32',
    'test_pow_types_float32_uint64',
    'test_qlinearconv',
    'test_quantizelinear',
    'test_quantizelinear_axis',
    'test_quantizelinear_blocked_asymmetric',
    'test_quantizelinear_blocked_symmetric',
    'test_quantizelinear_int16',
    'test_quantizelinear_uint16',
    'test_range_bfloat16_type_positive_delta',
    'test_range_bfloat16_type_positive_delta_expanded',
    'test_range_float16_type_positive_delta',
    'test_range_float16_type_positive_delta_expanded',
    'test_range_float_type_positive_delta',
    'test_range_float_type_positive_delta_expanded',
    'test_range_int32_type_negative_delta',
    'test_range_int32_type_negative_delta_expanded',
    'test_reduce_max_empty_set_bool',
    'test_resize_downsample_scales_cubic_align_corners',
    'test_resize_downsample_scales_linear_align_corners',
    'test_reversesequence_bfloat16',
    'test_roialign_aligned_false',
    'test_roialign_aligned_true',
    'test_roialign_mode_max',
    'test_scan9_scalar',
    'test_simple_rnn_batchwise',
    'test_stft',
    'test_stft_with_window',
    'test_swiglu',
    'test_swiglu_alpha',
    'test_swiglu_alpha_expanded',
    'test_swiglu_expanded',
    'test_swiglu_float16',
    'test_swiglu_float16_expanded',
    'test_top_k_uint64',
    'test_training_dropout',
    'test_training_dropout_default',
    'test_training_dropout_default_mask',
    'test_training_dropout_mask',
    'test_training_dropout_zero_ratio',
    'test_training_dropout_zero_ratio_mask',
    'test_unique_bfloat16_sorted_without_axis',
}  # fmt: skip
