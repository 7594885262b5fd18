// Neural-network ops: dense/matmul, normalizations, attention, recurrent layers, Fourier transforms.
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/nn/attention.hpp"
#include "nnvm/ops/nn/batch_norm.hpp"
#include "nnvm/ops/nn/dense.hpp"
#include "nnvm/ops/nn/det.hpp"
#include "nnvm/ops/nn/dft.hpp"
#include "nnvm/ops/nn/einsum.hpp"
#include "nnvm/ops/nn/group_norm.hpp"
#include "nnvm/ops/nn/gru.hpp"
#include "nnvm/ops/nn/instance_norm.hpp"
#include "nnvm/ops/nn/layer_norm.hpp"
#include "nnvm/ops/nn/linear_attention.hpp"
#include "nnvm/ops/nn/lp_normalization.hpp"
#include "nnvm/ops/nn/lrn.hpp"
#include "nnvm/ops/nn/lstm.hpp"
#include "nnvm/ops/nn/matmul.hpp"
#include "nnvm/ops/nn/mean_variance_normalization.hpp"
#include "nnvm/ops/nn/nll_loss.hpp"
#include "nnvm/ops/nn/rms_norm.hpp"
#include "nnvm/ops/nn/rnn.hpp"
#include "nnvm/ops/nn/rotary_embedding.hpp"
#include "nnvm/ops/nn/softmax_cross_entropy_loss.hpp"
#include "nnvm/ops/nn/stft.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> nn_ops() {
  return {
      attention_def(),
      batch_norm_def(),
      dense_def(),
      det_def(),
      dft_def(),
      einsum_def(),
      group_norm_def(),
      gru_def(),
      instance_norm_def(),
      layer_norm_def(),
      linear_attention_def(),
      lp_normalization_def(),
      lrn_def(),
      lstm_def(),
      matmul_def(),
      mean_variance_normalization_def(),
      negative_log_likelihood_loss_def(),
      rms_norm_def(),
      rnn_def(),
      rotary_embedding_def(),
      softmax_cross_entropy_loss_def(),
      stft_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
