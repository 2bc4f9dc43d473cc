"""A queue's advice follows its role: input buffer, fed from Python, or model state."""
from check_helpers import check
from compat._check.cli import main

# wavenet's fast generation (ibab/tensorflow-wavenet, model.py): one FIFOQueue per layer
# holds the previous sample's activations, pushed and popped once per generated sample
WAVENET = '''\
import tensorflow as tf


class WaveNetModel(object):
    def _generator_conv(self, input_batch, state_batch, weights):
        past_weights = weights[0, :, :]
        curr_weights = weights[1, :, :]
        return tf.matmul(state_batch, past_weights) + tf.matmul(input_batch, curr_weights)

    def _create_generator(self, input_batch):
        init_ops = []
        push_ops = []
        current_layer = input_batch

        q = tf.FIFOQueue(
            1,
            dtypes=tf.float32,
            shapes=(self.batch_size, self.quantization_channels))
        init = q.enqueue_many(
            tf.zeros((1, self.batch_size, self.quantization_channels)))

        current_state = q.dequeue()
        push = q.enqueue([current_layer])
        init_ops.append(init)
        push_ops.append(push)

        current_layer = self._generator_conv(
            current_layer, current_state, self.variables["causal_layer"]["filter"])
        self.init_ops = init_ops
        self.push_ops = push_ops
        return current_layer
'''

# facenet's train_softmax.py: image paths fed through placeholders, decoded by batch_join
FACENET = '''\
import tensorflow as tf
from tensorflow.python.ops import data_flow_ops


def main(args):
    image_paths_placeholder = tf.placeholder(tf.string, shape=(None, 1), name="image_paths")
    labels_placeholder = tf.placeholder(tf.int32, shape=(None, 1), name="labels")
    input_queue = data_flow_ops.FIFOQueue(capacity=2000000,
                                          dtypes=[tf.string, tf.int32],
                                          shapes=[(1,), (1,)],
                                          shared_name=None, name=None)
    enqueue_op = input_queue.enqueue_many([image_paths_placeholder, labels_placeholder],
                                          name="enqueue_op")
    images_and_labels = []
    for _ in range(args.nrof_preprocess_threads):
        filenames, label = input_queue.dequeue()
        images = [tf.image.decode_image(tf.read_file(f), channels=3) for f in tf.unstack(filenames)]
        images_and_labels.append([images, label])
    return tf.train.batch_join(images_and_labels, batch_size=90, capacity=4 * 90,
                               enqueue_many=True, allow_smaller_final_batch=True)
'''

# a hand-built input pipeline: threads of a QueueRunner fill the queue
RUNNER_FED = '''\
import tensorflow as tf


def inputs(filenames):
    filename_queue = tf.train.string_input_producer(filenames)
    _, value = tf.TextLineReader().read(filename_queue)
    record = tf.decode_csv(value, [[0.0], [0]])
    example_queue = tf.FIFOQueue(capacity=512, dtypes=[tf.float32, tf.int32], shapes=[[], []])
    enqueue_op = example_queue.enqueue(record)
    tf.train.add_queue_runner(tf.train.QueueRunner(example_queue, [enqueue_op] * 4))
    return example_queue.dequeue_many(64)
'''

# a feeder thread running the enqueue op with a feed_dict (the enqueued tensors come in as
# arguments, so only the run says where the values come from)
RUN_WITH_FEED = '''\
import threading

import tensorflow as tf


class Feeder(object):
    def __init__(self, sess, inputs):
        self.sess = sess
        self.queue = tf.PaddingFIFOQueue(8, [tf.int32, tf.float32], shapes=[[None], [None, 80]])
        self.enqueue_op = self.queue.enqueue(inputs)
        self.text, self.mel = self.queue.dequeue()

    def _enqueue_next_group(self, feed):
        self.sess.run(self.enqueue_op, feed_dict=feed)

    def start(self, feed):
        threading.Thread(target=self._enqueue_next_group, args=(feed,), daemon=True).start()
'''


def _queue(source):
    [found] = [f for f in check(source).findings if f.code.startswith("TFQ30")]
    return found


def test_state_buffer_is_not_an_input_pipeline():
    found = _queue(WAVENET)
    assert found.coverage == "not an input pipeline"
    assert "a state buffer in model code" in found.message
    assert "prefetch(" not in found.tf_data
    assert "tf.Variable" in found.tf_data and "tf.TensorArray" in found.tf_data


def test_state_buffer_neither_fails_the_run_nor_is_rewritten(tmp_path, capsys):
    path = tmp_path / "model.py"
    path.write_text(WAVENET)
    assert main(["-q", "--fix", "--fail-on", "any", str(tmp_path)]) == 0
    assert path.read_text() == WAVENET  # noop: nothing to switch to the shim
    out = capsys.readouterr().out
    assert "1 site not an input pipeline (queues holding model state): keep as is" in out


def test_placeholder_fed_queue_gets_the_from_generator_shape():
    found = _queue(FACENET)
    assert "prefetch(" not in found.tf_data
    assert found.tf_data.startswith(
        "tf.data.Dataset.from_generator(generator, output_signature=("
        "tf.TensorSpec((1,), tf.string), tf.TensorSpec((1,), tf.int32)))")
    assert "fed from Python" in found.message
    assert found.coverage == "covered"  # the shim still runs it: a migration site


def test_queue_whose_enqueue_op_is_run_with_a_feed_is_python_fed():
    found = _queue(RUN_WITH_FEED)
    assert found.code == "TFQ303"
    assert "from_generator" in found.tf_data and "padded_batch" not in found.tf_data
    assert "tf.TensorSpec([None], tf.int32), tf.TensorSpec([None, 80], tf.float32)" \
        in found.tf_data


def test_runner_filled_queue_keeps_the_prefetch_advice():
    found = _queue(RUNNER_FED)
    assert found.tf_data.startswith("dataset.prefetch(512)")
    assert "fed from Python" not in found.message


def test_same_name_in_another_function_is_another_queue():
    # `q` here is a state buffer; the `q` that main() hands to a QueueRunner is not it
    source = WAVENET + '''

def main():
    q = tf.FIFOQueue(100, [tf.string])
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue([tf.constant("x")])] * 4))
    return q.dequeue()
'''
    queues = [f for f in check(source).findings if f.code == "TFQ301"]
    assert [f.coverage for f in queues] == ["not an input pipeline", "covered"]
    assert queues[1].tf_data.startswith("dataset.prefetch(100)")
