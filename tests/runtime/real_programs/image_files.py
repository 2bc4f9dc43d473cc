"""Encoding synthetic pictures for the programs' data files (shared by the writers)."""


def encoded_images(images, image_format="png", quality=90):
    """PNG or JPEG bytes of uint8 [h, w, 3] arrays, encoded by TensorFlow in a throwaway graph."""
    import tensorflow as tf_root
    with tf_root.Graph().as_default():
        pixels = tf_root.compat.v1.placeholder(tf_root.uint8, [None, None, 3])
        encoded = (tf_root.image.encode_png(pixels) if image_format == "png"
                   else tf_root.image.encode_jpeg(pixels, quality=quality))
        with tf_root.compat.v1.Session() as sess:
            return [sess.run(encoded, {pixels: image}) for image in images]
