//===- Initializers.cpp - parameter initialization and synthetic data -----===//

#include "dlc/runtime/Initializers.h"
#include "dlc/runtime/OpRules.h"

#include <cmath>
#include <cstring>

namespace dlc::rt {

namespace {

/// A float or an integer attribute (a model file writes `a = 0` or `a = 0.5`).
double number(const PlanAttrs &attrs, const std::string &key, double fallback) {
  if (const double *f = findAttr<double>(attrs, key))
    return *f;
  if (const int64_t *i = findAttr<int64_t>(attrs, key))
    return static_cast<double>(*i);
  return fallback;
}

std::string text(const PlanAttrs &attrs, const std::string &key,
                 const std::string &fallback) {
  const std::string *s = findAttr<std::string>(attrs, key);
  return s ? *s : fallback;
}

/// torch.nn.init.calculate_gain for the nonlinearities models use.
double gainOf(const std::string &nonlinearity, double a) {
  if (nonlinearity == "relu")
    return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu")
    return std::sqrt(2.0 / (1 + a * a));
  return 1.0;
}

} // namespace

Fans computeFans(const std::vector<int64_t> &shape) {
  Fans fans;
  if (shape.empty())
    return fans;
  if (shape.size() == 1) {
    fans.in = fans.out = static_cast<double>(shape[0]);
    return fans;
  }
  double receptive = 1;
  for (size_t i = 2; i < shape.size(); ++i)
    receptive *= static_cast<double>(shape[i]);
  fans.in = static_cast<double>(shape[1]) * receptive;
  fans.out = static_cast<double>(shape[0]) * receptive;
  return fans;
}

Status initializeValues(const PlanBuffer &buffer, std::mt19937_64 &rng,
                        std::vector<float> &values) {
  values.assign(buffer.numElements(), 0.0f);
  const PlanAttrs &attrs = buffer.init;
  std::string kind = text(attrs, "init", "");
  auto fail = [&](const std::string &why) {
    return Status(StatusCode::kInvalidArgument,
                  "buffer '" + buffer.name + "': " + why);
  };
  // The bounds come from a file: a negative spread would redraw a
  // truncated normal forever.
  bool spreadOk = true;
  auto fillNormal = [&](double mean, double std, bool truncated) {
    if (!std::isfinite(mean) || !std::isfinite(std) || std < 0) {
      spreadOk = false;
      return;
    }
    std::normal_distribution<double> normal(mean, std);
    for (float &v : values) {
      double x = normal(rng);
      // As BERT's truncated normal: redraw outside two standard deviations.
      while (truncated && std::fabs(x - mean) > 2 * std)
        x = normal(rng);
      v = static_cast<float>(x);
    }
  };
  auto fillUniform = [&](double low, double high) {
    if (!std::isfinite(low) || !std::isfinite(high) || low > high) {
      spreadOk = false;
      return;
    }
    std::uniform_real_distribution<double> uniform(low, high);
    for (float &v : values)
      v = static_cast<float>(uniform(rng));
  };
  // Fans and the order of the draws are the declared shape's, so a
  // parameter stored in another order starts from the same values.
  Fans fans = computeFans(declaredShape(buffer));
  if (kind == "zeros") {
  } else if (kind == "ones") {
    std::fill(values.begin(), values.end(), 1.0f);
  } else if (kind == "constant") {
    std::fill(values.begin(), values.end(), static_cast<float>(number(attrs, "value", 0)));
  } else if (kind == "normal" || kind == "truncated_normal") {
    fillNormal(number(attrs, "mean", 0), number(attrs, "std", 1), kind == "truncated_normal");
  } else if (kind == "uniform") {
    fillUniform(number(attrs, "low", 0), number(attrs, "high", 1));
  } else if (kind == "kaiming_normal" || kind == "kaiming_uniform") {
    double a = number(attrs, "a", 0);
    // PyTorch's defaults: fan_in, leaky_relu gain (relu's when a = 0).
    std::string nonlinearity = text(attrs, "nonlinearity", "leaky_relu");
    double fan = text(attrs, "mode", "fan_in") == "fan_out" ? fans.out : fans.in;
    double std = gainOf(nonlinearity, a) / std::sqrt(fan);
    if (kind == "kaiming_normal")
      fillNormal(0, std, false);
    else
      fillUniform(-std * std::sqrt(3.0), std * std::sqrt(3.0));
  } else if (kind == "xavier_normal" || kind == "xavier_uniform") {
    double std = number(attrs, "gain", 1) * std::sqrt(2.0 / (fans.in + fans.out));
    if (kind == "xavier_normal")
      fillNormal(0, std, false);
    else
      fillUniform(-std * std::sqrt(3.0), std * std::sqrt(3.0));
  } else {
    return fail("unknown initializer '" + kind + "'");
  }
  if (!spreadOk)
    return fail("initializer '" + kind + "' has a spread that is negative or not finite");
  if (!storagePermutation(buffer).empty()) {
    std::string stored = toStoredOrder(
        buffer,
        std::string_view(reinterpret_cast<const char *>(values.data()),
                         values.size() * sizeof(float)),
        sizeof(float));
    std::memcpy(values.data(), stored.data(), stored.size());
  }
  return Status::ok();
}

int64_t integerRangeOf(const Plan &plan, int32_t bufferId) {
  for (const PlanKernel &k : plan.kernels) {
    if (k.id == OpId::kEmbedding && k.inputs.size() == 2 && k.inputs[1] == bufferId)
      return plan.buffers[k.inputs[0]].shape[0];
    if (k.id == OpId::kSoftmaxCrossEntropy && k.inputs.size() == 2 &&
        k.inputs[1] == bufferId) {
      // The class axis is within the logits' rank: a validated fact (OpRules.h).
      const std::vector<int64_t> &logits = plan.buffers[k.inputs[0]].shape;
      return logits[kernelAxis(k, "class_axis", 1, static_cast<int64_t>(logits.size()))];
    }
  }
  return 0;
}

} // namespace dlc::rt
